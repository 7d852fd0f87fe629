/*
 * osmroute's view of OpenSM: the headers bindgen reads, plus small C
 * wrappers for what OpenSM only offers as inline functions or macros
 * (complib map iteration, node/port accessors, byte-order helpers, the
 * variadic logger). Everything else is used through bindgen's bindings.
 */
#ifndef OSMROUTE_SHIM_H
#define OSMROUTE_SHIM_H

#include <stdint.h>
#include <opensm/osm_config.h>
#include <opensm/osm_version.h>
#include <opensm/osm_opensm.h>
#include <opensm/osm_event_plugin.h>
#include <opensm/osm_subnet.h>
#include <opensm/osm_switch.h>
#include <opensm/osm_node.h>
#include <opensm/osm_port.h>
#include <opensm/osm_log.h>
#include <opensm/osm_multicast.h>
#include <opensm/osm_mcast_mgr.h>

/* Node table iteration: NULL past the last node. */
osm_node_t *osmroute_node_first(osm_subn_t *subn);
osm_node_t *osmroute_node_next(osm_subn_t *subn, osm_node_t *node);

uint8_t osmroute_node_type(const osm_node_t *node);
uint64_t osmroute_node_guid(const osm_node_t *node);        /* host order */
uint8_t osmroute_node_port_slots(const osm_node_t *node);   /* incl. port 0 */
/* Copies the node description (NUL-terminated, at most 64 chars) into buf. */
void osmroute_node_desc(const osm_node_t *node, char buf[65]);
osm_switch_t *osmroute_node_switch(osm_node_t *node);
/* The valid physical port `num`, or NULL. */
osm_physp_t *osmroute_node_port(osm_node_t *node, uint8_t num);

uint64_t osmroute_port_guid(const osm_physp_t *port);       /* host order */
uint16_t osmroute_port_base_lid(const osm_physp_t *port);   /* host order */
uint8_t osmroute_port_lmc(const osm_physp_t *port);
uint8_t osmroute_port_state(const osm_physp_t *port);
uint8_t osmroute_port_op_vls(const osm_physp_t *port);
uint8_t osmroute_port_vl_cap(const osm_physp_t *port);
uint8_t osmroute_port_num(const osm_physp_t *port);
osm_node_t *osmroute_port_node(const osm_physp_t *port);
/* The valid peer port across the cable, or NULL. */
osm_physp_t *osmroute_port_remote(const osm_physp_t *port);

/* The switch's new LFT and its usable length (max_lid_ho + 1 entries). */
uint8_t *osmroute_switch_new_lft(osm_switch_t *sw, uint32_t *len);
/* The switch's hop-table row pointers (one per LID, NULL until OpenSM
 * allocates the row) and their number. */
uint8_t **osmroute_switch_hop_rows(osm_switch_t *sw, uint32_t *count);

/* Sets OpenSM's LMC to `lmc` and has the next heavy sweep (requested
 * here, run right after this one) reassign every LID with it. Call only
 * from a routing callback (the SM's own thread, under its lock). */
void osmroute_request_lmc(osm_opensm_t *osm, uint8_t lmc);

/* opensm-patch: the SA asks the routing engine which LIDs to answer first
 * (struct osm_routing_engine's path_lids, appended after the stock fields).
 * A patched OpenSM exports osm_routing_engine_set_path_lids; these look it
 * up in the running process, so the same plugin loads into a stock one. */
typedef int (*osmroute_path_lids_fn)(void *context, ib_net16_t src_base_lid,
				     ib_net16_t dest_base_lid,
				     ib_net16_t *p_slid, ib_net16_t *p_dlid);
/* 1 if the running OpenSM has the hook, 0 if it is stock. */
int osmroute_sa_path_lids_available(void);
/* Sets `re`'s path_lids to `fn` through the hook; 0 if there is none. */
int osmroute_set_path_lids(struct osm_routing_engine *re, osmroute_path_lids_fn fn);

/* One log line at `level` (OSM_LOG_* bits); the message is printed as is. */
void osmroute_log(osm_log_t *log, uint8_t level, const char *msg);
/* Whether `level` would be printed (OpenSM's log mask). */
int osmroute_log_enabled(const osm_log_t *log, uint8_t level);

/* Multicast (an engine's mcast_build_stree). The MLID of a group box, in
 * host order. */
uint16_t osmroute_mbox_mlid(const osm_mgrp_box_t *mbox);
/* The SL of the box's first group's MCMemberRecord (all groups sharing an
 * MLID share it in practice). */
uint8_t osmroute_mbox_sl(const osm_mgrp_box_t *mbox);
/* The member ports of every group of the box, once each (OpenSM's
 * osm_mcast_make_port_list_and_map): their port GUIDs in host order,
 * at most `max` stored; returns how many there are, or -1 without memory. */
int osmroute_mbox_members(osm_mgrp_box_t *mbox, uint64_t *guids, unsigned max);
/* Adds `port` to the MFT entry of `mlid_ho` of the switch with node GUID
 * `guid` (host order); 0 done, -1 no such switch or port. */
int osmroute_mcast_set(osm_opensm_t *osm, uint64_t guid, uint16_t mlid_ho, uint8_t port);
/* Frees the box's tree of OpenSM's own default builder, if an earlier pass
 * left one (osm_purge_mtree; our trees keep none). */
void osmroute_mbox_purge_tree(osm_opensm_t *osm, osm_mgrp_box_t *mbox);
/* 1 if the subnet has a group box for multicast LID `mlid_ho` (host
 * order), 0 if not: never created, or deleted when its last member left
 * (OpenSM then clears its MFTs without calling the engine), or not a
 * multicast LID. Reads the subnet's mboxes array, which the SA changes
 * under OpenSM's lock: call from mcast_build_stree, which runs under it. */
int osmroute_mlid_has_group(const osm_opensm_t *osm, uint16_t mlid_ho);
/* Sets or clears (fn NULL) the engine's mcast_build_stree. */
typedef ib_api_status_t (*osmroute_mcast_fn)(void *context, osm_mgrp_box_t *mbox);
void osmroute_set_mcast_build_stree(struct osm_routing_engine *re, osmroute_mcast_fn fn);

#endif
