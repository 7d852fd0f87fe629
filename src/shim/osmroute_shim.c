/* C side of include/osmroute_shim.h; see there for why it exists. */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include <dlfcn.h>
#include <string.h>
#include "osmroute_shim.h"

osm_node_t *osmroute_node_first(osm_subn_t *subn)
{
	cl_map_item_t *item = cl_qmap_head(&subn->node_guid_tbl);
	return item == cl_qmap_end(&subn->node_guid_tbl) ? NULL : (osm_node_t *)item;
}

osm_node_t *osmroute_node_next(osm_subn_t *subn, osm_node_t *node)
{
	cl_map_item_t *item = cl_qmap_next(&node->map_item);
	return item == cl_qmap_end(&subn->node_guid_tbl) ? NULL : (osm_node_t *)item;
}

uint8_t osmroute_node_type(const osm_node_t *node)
{
	return osm_node_get_type(node);
}

uint64_t osmroute_node_guid(const osm_node_t *node)
{
	return cl_ntoh64(osm_node_get_node_guid(node));
}

uint8_t osmroute_node_port_slots(const osm_node_t *node)
{
	return osm_node_get_num_physp(node);
}

void osmroute_node_desc(const osm_node_t *node, char buf[65])
{
	memcpy(buf, node->node_desc.description, 64);
	buf[64] = '\0';
}

osm_switch_t *osmroute_node_switch(osm_node_t *node)
{
	return node->sw;
}

osm_physp_t *osmroute_node_port(osm_node_t *node, uint8_t num)
{
	if (num >= osm_node_get_num_physp(node))
		return NULL;
	return osm_node_get_physp_ptr(node, num);
}

uint64_t osmroute_port_guid(const osm_physp_t *port)
{
	return cl_ntoh64(osm_physp_get_port_guid(port));
}

uint16_t osmroute_port_base_lid(const osm_physp_t *port)
{
	return cl_ntoh16(osm_physp_get_base_lid(port));
}

uint8_t osmroute_port_lmc(const osm_physp_t *port)
{
	return osm_physp_get_lmc(port);
}

uint8_t osmroute_port_state(const osm_physp_t *port)
{
	return osm_physp_get_port_state(port);
}

uint8_t osmroute_port_op_vls(const osm_physp_t *port)
{
	return ib_port_info_get_op_vls(&port->port_info);
}

uint8_t osmroute_port_vl_cap(const osm_physp_t *port)
{
	return ib_port_info_get_vl_cap(&port->port_info);
}

uint8_t osmroute_port_num(const osm_physp_t *port)
{
	return osm_physp_get_port_num(port);
}

osm_node_t *osmroute_port_node(const osm_physp_t *port)
{
	return osm_physp_get_node_ptr(port);
}

osm_physp_t *osmroute_port_remote(const osm_physp_t *port)
{
	osm_physp_t *remote = osm_physp_get_remote(port);
	return remote && osm_physp_is_valid(remote) ? remote : NULL;
}

uint8_t *osmroute_switch_new_lft(osm_switch_t *sw, uint32_t *len)
{
	uint32_t usable = (uint32_t)sw->max_lid_ho + 1;
	*len = usable < sw->lft_size ? usable : sw->lft_size;
	return sw->new_lft;
}

uint8_t **osmroute_switch_hop_rows(osm_switch_t *sw, uint32_t *count)
{
	*count = sw->num_hops;
	return sw->hops;
}

void osmroute_log(osm_log_t *log, uint8_t level, const char *msg)
{
	osm_log(log, level, "%s\n", msg);
}

int osmroute_log_enabled(const osm_log_t *log, uint8_t level)
{
	return (log->level & level) != 0;
}

void osmroute_request_lmc(osm_opensm_t *osm, uint8_t lmc)
{
	/* The LID manager reassigns every LID, from scratch and aligned to the
	 * new LMC, only in a first master sweep with reassign_lids (the other
	 * paths keep discovered LIDs that may clash with the new ranges).
	 * force_first_time_master_sweep makes the next sweep one, as after a
	 * handover; force_heavy_sweep starts it when this sweep ends. A
	 * configuration rescan leaves reassign_lids alone unless the file's
	 * value changes. */
	osm->subn.opt.lmc = lmc;
	osm->subn.opt.reassign_lids = TRUE;
	osm->subn.force_first_time_master_sweep = TRUE;
	osm->subn.force_heavy_sweep = TRUE;
}

typedef void (*set_path_lids_fn)(struct osm_routing_engine *re, osmroute_path_lids_fn fn);

/* The patched OpenSM's setter, or NULL in a stock OpenSM. The executable
 * exports its symbols (-rdynamic), so the default search scope finds it. */
static set_path_lids_fn path_lids_setter(void)
{
	set_path_lids_fn setter;
	void *sym = dlsym(RTLD_DEFAULT, "osm_routing_engine_set_path_lids");

	memcpy(&setter, &sym, sizeof(setter));
	return setter;
}

int osmroute_sa_path_lids_available(void)
{
	return path_lids_setter() != NULL;
}

int osmroute_set_path_lids(struct osm_routing_engine *re, osmroute_path_lids_fn fn)
{
	set_path_lids_fn setter = path_lids_setter();

	if (!setter || !re)
		return 0;
	setter(re, fn);
	return 1;
}

uint16_t osmroute_mbox_mlid(const osm_mgrp_box_t *mbox)
{
	return mbox->mlid;
}

uint8_t osmroute_mbox_sl(const osm_mgrp_box_t *mbox)
{
	const osm_mgrp_t *mgrp;
	uint8_t sl = 0;

	if (cl_is_qlist_empty(&mbox->mgrp_list))
		return 0;
	mgrp = cl_item_obj(cl_qlist_head(&mbox->mgrp_list), mgrp, list_item);
	ib_member_get_sl_flow_hop(mgrp->mcmember_rec.sl_flow_hop, &sl, NULL, NULL);
	return sl;
}

int osmroute_mbox_members(osm_mgrp_box_t *mbox, uint64_t *guids, unsigned max)
{
	cl_qlist_t list;
	cl_qmap_t map;
	cl_list_item_t *item;
	unsigned n = 0;

	if (osm_mcast_make_port_list_and_map(&list, &map, mbox)) {
		osm_mcast_drop_port_list(&list);
		return -1;
	}
	for (item = cl_qlist_head(&list); item != cl_qlist_end(&list);
	     item = cl_qlist_next(item)) {
		osm_mcast_work_obj_t *w = cl_item_obj(item, w, list_item);

		if (n < max)
			guids[n] = cl_ntoh64(w->p_port->guid);
		n++;
	}
	osm_mcast_drop_port_list(&list);
	return (int)n;
}

int osmroute_mcast_set(osm_opensm_t *osm, uint64_t guid, uint16_t mlid_ho, uint8_t port)
{
	osm_switch_t *sw = osm_get_switch_by_guid(&osm->subn, cl_hton64(guid));

	if (!sw || port >= sw->num_ports)
		return -1;
	osm_mcast_tbl_set(osm_switch_get_mcast_tbl_ptr(sw), mlid_ho, port);
	return 0;
}

void osmroute_mbox_purge_tree(osm_opensm_t *osm, osm_mgrp_box_t *mbox)
{
	osm_purge_mtree(&osm->sm, mbox);
}

int osmroute_mlid_has_group(const osm_opensm_t *osm, uint16_t mlid_ho)
{
	/* osm_get_mbox_by_mlid indexes the array unchecked. */
	if (mlid_ho < IB_LID_MCAST_START_HO || mlid_ho > IB_LID_MCAST_END_HO)
		return 0;
	return osm_get_mbox_by_mlid(&osm->subn, cl_hton16(mlid_ho)) != NULL;
}

void osmroute_set_mcast_build_stree(struct osm_routing_engine *re, osmroute_mcast_fn fn)
{
	re->mcast_build_stree = fn;
}
