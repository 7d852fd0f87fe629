/*
 * sa-first-path: asks the SA, as an application resolving a path by GIDs
 * does, for the path between each pair of ports read from stdin, and
 * prints the first path it answers.
 *
 *   sa-first-path [-m] < PAIRS
 *
 * PAIRS: one "SRC_PORT_GUID DST_PORT_GUID" per line (hex, link-local
 * GIDs fe80::GUID). Output: "SRC_PORT_GUID DST_PORT_GUID SLID DLID" per
 * pair (decimal LIDs, 0 0 when the SA answered no path).
 *
 * Default: PathRecord SubnAdmGet (SGID, DGID, NumbPath 1), the query
 * rdma_cm and IPoIB make; a Get's response carries one record. -m:
 * MultiPathRecord SubnAdmGetMulti (one SGID, one DGID, NumbPath 16); the
 * first PathRecord of the response is printed. saquery cannot send
 * MultiPathRecords, and starting one saquery per pair under umad2sim is
 * slow; one process asks all pairs here.
 *
 * Layouts are those of the InfiniBand Architecture Specification (SA MAD
 * header, PathRecord, MultiPathRecord); libibumad sends and receives.
 */
#include <endian.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/umad.h>

#define SA_CLASS 0x03
#define SA_CLASS_VERSION 2
#define METHOD_GET 0x01
#define METHOD_GETMULTI 0x14
#define ATTR_PATH_RECORD 0x0035
#define ATTR_MULTIPATH_RECORD 0x003A
#define SA_QKEY 0x80010000
#define MAD_SIZE 256
#define SA_DATA 56		/* SA header ends, attribute data starts */
#define RMPP_TYPE_DATA 1
#define RMPP_FLAGS_ACTIVE_FIRST_LAST 0x07
#define SA_HEADER_AFTER_RMPP 20	/* sm_key .. comp_mask */
#define MPR_PAYLOAD (24 + 2 * 16)	/* fixed fields and two GIDs */
#define TIMEOUT_MS 2000
#define RETRIES 3

static void put16(uint8_t *p, uint16_t v) { v = htobe16(v); memcpy(p, &v, 2); }
static void put32(uint8_t *p, uint32_t v) { v = htobe32(v); memcpy(p, &v, 4); }
static void put64(uint8_t *p, uint64_t v) { v = htobe64(v); memcpy(p, &v, 8); }
static uint16_t get16(const uint8_t *p) { uint16_t v; memcpy(&v, p, 2); return be16toh(v); }
static uint64_t get64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return be64toh(v); }

/* fe80::/64 with the port GUID as interface ID. */
static void put_gid(uint8_t *p, uint64_t guid)
{
	put64(p, 0xfe80000000000000ULL);
	put64(p + 8, guid);
}

static void sa_header(uint8_t *mad, uint8_t method, uint16_t attr, uint64_t tid, uint64_t comp_mask)
{
	memset(mad, 0, MAD_SIZE);
	mad[0] = 1;		/* base version */
	mad[1] = SA_CLASS;
	mad[2] = SA_CLASS_VERSION;
	mad[3] = method;
	put64(mad + 8, tid);
	put16(mad + 16, attr);
	put64(mad + 48, comp_mask);
}

/* PathRecord Get by SGID and DGID, one path (what a GID resolution asks). */
static void path_record_get(uint8_t *mad, uint64_t tid, uint64_t src, uint64_t dst)
{
	uint8_t *pr = mad + SA_DATA;

	sa_header(mad, METHOD_GET, ATTR_PATH_RECORD, tid,
		  (1ULL << 2) | (1ULL << 3) | (1ULL << 12)); /* DGID SGID NUMBPATH */
	put_gid(pr + 8, dst);
	put_gid(pr + 24, src);
	pr[49] = 1;		/* NumbPath */
}

/* MultiPathRecord GetMulti with one SGID and one DGID. A GetMulti request
 * is an RMPP transfer: here a single active segment. */
static void multipath_record_getmulti(uint8_t *mad, uint64_t tid, uint64_t src, uint64_t dst)
{
	uint8_t *mpr = mad + SA_DATA;

	sa_header(mad, METHOD_GETMULTI, ATTR_MULTIPATH_RECORD, tid,
		  (1ULL << 6) | (1ULL << 19) | (1ULL << 20)); /* NUMBPATH SGIDCOUNT DGIDCOUNT */
	mad[24] = 1;		/* RMPP version */
	mad[25] = RMPP_TYPE_DATA;
	mad[26] = RMPP_FLAGS_ACTIVE_FIRST_LAST;
	put32(mad + 28, 1);	/* segment number */
	put32(mad + 32, SA_HEADER_AFTER_RMPP + MPR_PAYLOAD);
	mpr[5] = 16;		/* NumbPath */
	mpr[15] = 1;		/* SGIDCount */
	mpr[16] = 1;		/* DGIDCount */
	put_gid(mpr + 24, src);
	put_gid(mpr + 40, dst);
}

int main(int argc, char **argv)
{
	int multipath = argc > 1 && !strcmp(argv[1], "-m");
	umad_port_t port;
	int fd, agent, len;
	uint64_t src, dst, tid = 1;
	void *umad;
	uint8_t *mad;

	if (argc > 2 || (argc == 2 && !multipath)) {
		fprintf(stderr, "usage: %s [-m] < PAIRS\n", argv[0]);
		return 2;
	}
	if (umad_init() < 0 || umad_get_port(NULL, 0, &port) < 0) {
		fprintf(stderr, "sa-first-path: no InfiniBand port (under ibsim, preload libumad2sim.so)\n");
		return 1;
	}
	fd = umad_open_port(NULL, 0);
	agent = fd < 0 ? -1 : umad_register(fd, SA_CLASS, SA_CLASS_VERSION, 1, NULL);
	umad = calloc(1, umad_size() + MAD_SIZE * 64);
	if (agent < 0 || !umad) {
		fprintf(stderr, "sa-first-path: cannot open the port or register an SA agent\n");
		return 1;
	}
	mad = umad_get_mad(umad);

	while (scanf("%" SCNx64 " %" SCNx64, &src, &dst) == 2) {
		uint16_t slid = 0, dlid = 0;
		int tries;

		for (tries = 0; tries < RETRIES; tries++, tid++) {
			if (multipath)
				multipath_record_getmulti(mad, tid, src, dst);
			else
				path_record_get(mad, tid, src, dst);
			umad_set_addr(umad, port.sm_lid, 1, port.sm_sl, SA_QKEY);
			if (umad_send(fd, agent, umad, MAD_SIZE, TIMEOUT_MS, 0) < 0)
				continue;
			/* Skip stray answers to earlier, timed-out requests
			   (the upper half of a TID is the agent's). */
			do {
				len = MAD_SIZE * 64;
				if (umad_recv(fd, umad, &len, TIMEOUT_MS) < 0) {
					len = -1;
					break;
				}
			} while ((uint32_t)get64(mad + 8) != (uint32_t)tid);
			if (len >= 0)
				break;
		}
		if (tries == RETRIES) {
			fprintf(stderr, "sa-first-path: no answer for %" PRIx64 " -> %" PRIx64 "\n", src, dst);
			return 1;
		}
		/* Status 0 and at least one record: the first PathRecord. */
		if (get16(mad + 4) == 0 && len > SA_DATA + 44) {
			dlid = get16(mad + SA_DATA + 40);
			slid = get16(mad + SA_DATA + 42);
		}
		printf("%" PRIx64 " %" PRIx64 " %u %u\n", src, dst, slid, dlid);
	}
	fflush(stdout);
	umad_unregister(fd, agent);
	umad_close_port(fd);
	return 0;
}
