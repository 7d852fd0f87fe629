/*
 * mcjoin: joins this port to multicast groups as a full member, by SA
 * MCMemberRecord Set requests, the way IPoIB and MPI do. Written for the
 * osmroute integration tests; run under umad2sim with SIM_HOST naming the
 * host (ibsim), e.g.
 *   SIM_HOST=h0 LD_PRELOAD=.../libumad2sim.so mcjoin ff12:401b:ffff::ffff:ffff ff12:1234::7
 * A group that does not exist is created (Q_Key, P_Key 0xffff, SL 0 or
 * the SL in MCJOIN_SL; a join must name the SL of an existing group).
 * MCJOIN_STATE sets the JoinState bits (1 full member, the default; 2
 * non-member; 4 send-only non-member: only full members create groups),
 * and with MCJOIN_LEAVE set the port leaves those states instead (SA
 * Delete; OpenSM deletes a group whose last full member leaves).
 * Prints one line per group: "joined MGID mlid 0xC001" ("left MGID ..."
 * for a leave) or an error; exits 1 if any request failed.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/umad.h>
#include <infiniband/umad_types.h>
#include <infiniband/umad_sa.h>
#include <infiniband/umad_sa_mcm.h>

#define ATTR_MCMEMBER_RECORD 0x0038
#define QP1_QKEY 0x80010000
#define MC_QKEY 0x0b1b

/* MCMemberRecord component-mask bits (IBA 15.2.5.17). */
enum {
	CM_MGID = 1 << 0, CM_PORT_GID = 1 << 1, CM_QKEY = 1 << 2, CM_TCLASS = 1 << 6,
	CM_PKEY = 1 << 7, CM_SL = 1 << 12, CM_FLOW = 1 << 13, CM_JOIN_STATE = 1 << 16,
};

/* One MCMemberRecord request (Set joins, Delete leaves) for `state`. */
static int request(int fd, int agent, const umad_port_t *port, const uint8_t mgid[16],
		   uint64_t tid, uint8_t sl, uint8_t method, uint8_t state)
{
	size_t len = umad_size() + sizeof(struct umad_sa_packet);
	void *umad = calloc(1, len);
	struct umad_sa_packet *sa = umad_get_mad(umad);
	struct umad_sa_mcmember_record *rec = (void *)sa->data;
	int rlen = (int)sizeof(struct umad_sa_packet), ret = -1;

	sa->mad_hdr.base_version = 1;
	sa->mad_hdr.mgmt_class = UMAD_CLASS_SUBN_ADM;
	sa->mad_hdr.class_version = UMAD_SA_CLASS_VERSION;
	sa->mad_hdr.method = method;
	sa->mad_hdr.tid = htobe64(tid);
	sa->mad_hdr.attr_id = htons(ATTR_MCMEMBER_RECORD);
	sa->comp_mask = htobe64(CM_MGID | CM_PORT_GID | CM_QKEY | CM_TCLASS | CM_PKEY | CM_SL |
				CM_FLOW | CM_JOIN_STATE);
	memcpy(rec->mgid, mgid, 16);
	memcpy(rec->portgid, &port->gid_prefix, 8);
	memcpy(rec->portgid + 8, &port->port_guid, 8);
	rec->qkey = htonl(MC_QKEY);
	rec->pkey = htons(0xffff);
	rec->sl_flow_hop = umad_sa_mcm_set_sl_flow_hop(sl, 0, 0);
	rec->scope_state = umad_sa_mcm_set_scope_state(2, state); /* link-local */
	umad_set_addr(umad, port->sm_lid, 1, 0, QP1_QKEY);
	if (umad_send(fd, agent, umad, (int)sizeof(struct umad_sa_packet), 1000, 3) < 0)
		goto out;
	for (;;) {
		rlen = (int)sizeof(struct umad_sa_packet);
		if (umad_recv(fd, umad, &rlen, 5000) < 0)
			goto out;
		/* umad2sim, like the kernel, keeps only the low 32 bits of the TID. */
		if ((uint32_t)be64toh(sa->mad_hdr.tid) == (uint32_t)tid)
			break;
	}
	if (umad_status(umad) || sa->mad_hdr.status) {
		fprintf(stderr, "request refused: umad status %d, MAD status 0x%x\n", umad_status(umad),
			ntohs(sa->mad_hdr.status));
		goto out;
	}
	ret = ntohs(rec->mlid);
out:
	free(umad);
	return ret;
}

int main(int argc, char **argv)
{
	umad_port_t port;
	int fd, agent, i, failed = 0;
	const char *sl_text = getenv("MCJOIN_SL");
	const char *state_text = getenv("MCJOIN_STATE");
	uint8_t sl = sl_text ? (uint8_t)(atoi(sl_text) & 0xf) : 0;
	uint8_t state = state_text ? (uint8_t)(atoi(state_text) & 0xf) : 1;
	int leave = getenv("MCJOIN_LEAVE") != NULL;
	uint8_t method = leave ? UMAD_SA_METHOD_DELETE : UMAD_METHOD_SET;
	const char *done = leave ? "left" : "joined";

	if (umad_init() < 0 || umad_get_port(NULL, 0, &port) < 0) {
		fprintf(stderr, "mcjoin: no umad port\n");
		return 2;
	}
	fd = umad_open_port(NULL, 0);
	if (fd < 0) {
		fprintf(stderr, "mcjoin: cannot open the umad port\n");
		return 2;
	}
	agent = umad_register(fd, UMAD_CLASS_SUBN_ADM, UMAD_SA_CLASS_VERSION, 0, NULL);
	if (agent < 0) {
		fprintf(stderr, "mcjoin: cannot register an SA agent\n");
		return 2;
	}
	for (i = 1; i < argc; i++) {
		uint8_t mgid[16];
		int mlid;

		if (inet_pton(AF_INET6, argv[i], mgid) != 1) {
			fprintf(stderr, "mcjoin: '%s' is not an MGID (IPv6 notation)\n", argv[i]);
			failed = 1;
			continue;
		}
		mlid = request(fd, agent, &port, mgid, ((uint64_t)getpid() << 12) | (uint64_t)i, sl,
			       method, state);
		if (mlid < 0) {
			fprintf(stderr, "mcjoin: %s %s failed\n", leave ? "leaving" : "joining", argv[i]);
			failed = 1;
		} else {
			printf("%s %s mlid 0x%04X\n", done, argv[i], mlid);
		}
	}
	umad_close_port(fd);
	umad_done();
	return failed;
}
