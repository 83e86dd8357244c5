// SPDX-License-Identifier: MIT
/*
 * The TCM-USER generic netlink family, listened to on its "config"
 * multicast group: the kernel announces every user backstore added,
 * removed or reconfigured (dev_config, dev_size, write cache changed
 * through configfs). sdswarmd makes its devices itself, so the events
 * confirm its own work and reveal someone else's (a backstore of ours
 * removed or resized behind its back). Raw genetlink: two messages, no
 * library.
 *
 * The daemon never sends TCMU_CMD_SET_FEATURES: with reply support on,
 * the kernel would hold every configfs enable and rmdir until a reply
 * came, and it is the loop thread that would have to send it while the
 * daemon's own thread sits in that write; the setting is also global
 * and outlives the daemon, hanging anyone's later enable if it died.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/genetlink.h>
#include <linux/netlink.h>

#include "tcmu_i.h"

#define NLA_OK_LEN(len) ((len) >= (int)sizeof(struct nlattr))

/* Walks the attributes in @buf (@len bytes), calling @fn on each. */
static int attrs_each(const uint8_t *buf, int len,
		      int (*fn)(void *arg, uint16_t type, const uint8_t *val,
				int vlen),
		      void *arg)
{
	while (NLA_OK_LEN(len)) {
		struct nlattr a;
		int alen, ret;

		memcpy(&a, buf, sizeof(a));
		if (a.nla_len < sizeof(a) || a.nla_len > len)
			return -EPROTO;
		alen = NLA_ALIGN(a.nla_len);
		ret = fn(arg, a.nla_type & NLA_TYPE_MASK, buf + NLA_HDRLEN,
			 a.nla_len - NLA_HDRLEN);
		if (ret)
			return ret;
		if (alen >= len)
			break;
		buf += alen;
		len -= alen;
	}
	return 0;
}

static uint32_t u32_of(const uint8_t *val, int vlen)
{
	uint32_t v = 0;

	if (vlen >= 4)
		memcpy(&v, val, sizeof(v));
	return v;
}

static void str_of(char *dst, size_t dlen, const uint8_t *val, int vlen)
{
	size_t n = vlen > 0 ? (size_t)vlen : 0;

	if (n >= dlen)
		n = dlen - 1;
	memcpy(dst, val, n);
	dst[n] = '\0';
	/* the kernel's strings carry their NUL; a short copy keeps its own */
	dst[strnlen(dst, n)] = '\0';
}

static int event_attr(void *arg, uint16_t type, const uint8_t *val, int vlen)
{
	struct tcmu_nl_event *ev = arg;

	switch (type) {
	case TCMU_ATTR_DEVICE:
		str_of(ev->device, sizeof(ev->device), val, vlen);
		break;
	case TCMU_ATTR_MINOR:
		ev->minor = (int32_t)u32_of(val, vlen);
		break;
	case TCMU_ATTR_DEVICE_ID:
		ev->device_id = u32_of(val, vlen);
		break;
	case TCMU_ATTR_DEV_CFG:
		str_of(ev->dev_config, sizeof(ev->dev_config), val, vlen);
		break;
	case TCMU_ATTR_DEV_SIZE:
		if (vlen >= 8)
			memcpy(&ev->dev_size, val, sizeof(ev->dev_size));
		ev->has_size = vlen >= 8;
		break;
	case TCMU_ATTR_WRITECACHE:
		ev->writecache = vlen >= 1 ? val[0] : 0;
		ev->has_writecache = vlen >= 1;
		break;
	default:
		break;
	}
	return 0;
}

int tcmu_nl_parse(const void *buf, size_t len, uint16_t family,
		  struct tcmu_nl_event *ev)
{
	const uint8_t *p = buf;
	struct nlmsghdr nh;
	struct genlmsghdr gh;
	int alen;

	memset(ev, 0, sizeof(*ev));
	ev->minor = -1;
	if (len < NLMSG_HDRLEN + GENL_HDRLEN)
		return -EPROTO;
	memcpy(&nh, p, sizeof(nh));
	if (nh.nlmsg_len < NLMSG_HDRLEN + GENL_HDRLEN || nh.nlmsg_len > len)
		return -EPROTO;
	if (nh.nlmsg_type != family)
		return 0;
	memcpy(&gh, p + NLMSG_HDRLEN, sizeof(gh));
	ev->cmd = gh.cmd;
	alen = (int)(nh.nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN);
	if (attrs_each(p + NLMSG_HDRLEN + GENL_HDRLEN, alen, event_attr, ev))
		return -EPROTO;
	return 1;
}

/* ---- resolving the family -------------------------------------------- */

struct family_info {
	uint16_t id;
	uint32_t group;
	char grp_name[GENL_NAMSIZ];
	uint32_t grp_id;
};

static int group_attr(void *arg, uint16_t type, const uint8_t *val, int vlen)
{
	struct family_info *fi = arg;

	if (type == CTRL_ATTR_MCAST_GRP_NAME)
		str_of(fi->grp_name, sizeof(fi->grp_name), val, vlen);
	else if (type == CTRL_ATTR_MCAST_GRP_ID)
		fi->grp_id = u32_of(val, vlen);
	return 0;
}

static int groups_attr(void *arg, uint16_t type, const uint8_t *val, int vlen)
{
	struct family_info *fi = arg;

	(void)type; /* each nested entry is one group, numbered from 1 */
	fi->grp_name[0] = '\0';
	fi->grp_id = 0;
	if (attrs_each(val, vlen, group_attr, fi))
		return -EPROTO;
	if (strcmp(fi->grp_name, "config") == 0)
		fi->group = fi->grp_id;
	return 0;
}

static int family_attr(void *arg, uint16_t type, const uint8_t *val, int vlen)
{
	struct family_info *fi = arg;

	if (type == CTRL_ATTR_FAMILY_ID && vlen >= 2)
		memcpy(&fi->id, val, sizeof(fi->id));
	else if (type == CTRL_ATTR_MCAST_GROUPS)
		return attrs_each(val, vlen, groups_attr, fi);
	return 0;
}

static int resolve(int fd, struct family_info *fi)
{
	static const char name[] = "TCM-USER";
	uint8_t req[NLMSG_HDRLEN + GENL_HDRLEN + NLA_HDRLEN +
		    NLA_ALIGN(sizeof(name))] = {0};
	uint8_t resp[4096];
	struct nlmsghdr nh = {.nlmsg_len = sizeof(req),
			      .nlmsg_type = GENL_ID_CTRL,
			      .nlmsg_flags = NLM_F_REQUEST,
			      .nlmsg_seq = 1};
	struct genlmsghdr gh = {.cmd = CTRL_CMD_GETFAMILY, .version = 1};
	struct nlattr na = {.nla_len = NLA_HDRLEN + sizeof(name),
			    .nla_type = CTRL_ATTR_FAMILY_NAME};
	struct nlmsgerr err;
	ssize_t n;

	memcpy(req, &nh, sizeof(nh));
	memcpy(req + NLMSG_HDRLEN, &gh, sizeof(gh));
	memcpy(req + NLMSG_HDRLEN + GENL_HDRLEN, &na, sizeof(na));
	memcpy(req + NLMSG_HDRLEN + GENL_HDRLEN + NLA_HDRLEN, name,
	       sizeof(name));
	if (send(fd, req, sizeof(req), 0) < 0)
		return -errno;
	n = recv(fd, resp, sizeof(resp), 0);
	if (n < 0)
		return -errno;
	if ((size_t)n < NLMSG_HDRLEN)
		return -EPROTO;
	memcpy(&nh, resp, sizeof(nh));
	if (nh.nlmsg_type == NLMSG_ERROR) {
		if ((size_t)n < NLMSG_HDRLEN + sizeof(err))
			return -EPROTO;
		memcpy(&err, resp + NLMSG_HDRLEN, sizeof(err));
		return err.error ? err.error : -EPROTO;
	}
	if (nh.nlmsg_type != GENL_ID_CTRL || nh.nlmsg_len > (size_t)n ||
	    nh.nlmsg_len < NLMSG_HDRLEN + GENL_HDRLEN)
		return -EPROTO;
	if (attrs_each(resp + NLMSG_HDRLEN + GENL_HDRLEN,
		       (int)(nh.nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN),
		       family_attr, fi))
		return -EPROTO;
	return fi->id && fi->group ? 0 : -ENOENT;
}

int tcmu_nl_open(int *fd, uint16_t *family)
{
	struct sockaddr_nl sa = {.nl_family = AF_NETLINK};
	struct family_info fi = {0};
	struct timeval tv = {.tv_sec = 2};
	int s, ret;

	s = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (s < 0)
		return -errno;
	if (bind(s, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		goto out_errno;
	/* the controller answers at once; never wait forever for it */
	if (setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0)
		goto out_errno;
	ret = resolve(s, &fi);
	if (ret)
		goto out_close;
	if (setsockopt(s, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &fi.group,
		       sizeof(fi.group)) < 0)
		goto out_errno;
	tv.tv_sec = 0;
	if (setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0)
		goto out_errno;
	*fd = s;
	*family = fi.id;
	return 0;

out_errno:
	ret = -errno;
out_close:
	close(s);
	return ret;
}
