// SPDX-License-Identifier: MIT
/*
 * Decoding the TCM-USER generic netlink events as the kernel sends them
 * (netlink header, genetlink header, attributes padded to 4 bytes):
 * device name, uio minor, device id, the reconfigured size and write
 * cache; another family's message is ignored, a truncated one refused.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include <linux/genetlink.h>
#include <linux/netlink.h>

#include "frontend/tcmu/tcmu_i.h"

#define FAMILY 0x1d

struct msg {
	uint8_t buf[1024];
	size_t len;
};

static void msg_start(struct msg *m, uint16_t type, uint8_t cmd)
{
	struct nlmsghdr nh = {.nlmsg_type = type};
	struct genlmsghdr gh = {.cmd = cmd, .version = 2};

	memset(m, 0, sizeof(*m));
	memcpy(m->buf, &nh, sizeof(nh));
	memcpy(m->buf + NLMSG_HDRLEN, &gh, sizeof(gh));
	m->len = NLMSG_HDRLEN + GENL_HDRLEN;
}

static void msg_attr(struct msg *m, uint16_t type, const void *val, size_t len)
{
	struct nlattr a = {.nla_len = (uint16_t)(NLA_HDRLEN + len),
			   .nla_type = type};

	memcpy(m->buf + m->len, &a, sizeof(a));
	memcpy(m->buf + m->len + NLA_HDRLEN, val, len);
	m->len += NLA_ALIGN(NLA_HDRLEN + len);
}

static void msg_end(struct msg *m)
{
	uint32_t len = (uint32_t)m->len;

	memcpy(m->buf + offsetof(struct nlmsghdr, nlmsg_len), &len,
	       sizeof(len));
}

static const char dev[] = "tcm-user/0/sdswarm3/sdswarm/sdswarm3";

static void test_added(void **state)
{
	struct tcmu_nl_event ev;
	uint32_t minor = 5, id = 7;
	struct msg m;

	(void)state;
	msg_start(&m, FAMILY, TCMU_CMD_ADDED_DEVICE);
	msg_attr(&m, TCMU_ATTR_DEVICE, dev, sizeof(dev));
	msg_attr(&m, TCMU_ATTR_MINOR, &minor, 4);
	msg_attr(&m, TCMU_ATTR_DEVICE_ID, &id, 4);
	msg_end(&m);
	assert_int_equal(tcmu_nl_parse(m.buf, m.len, FAMILY, &ev), 1);
	assert_int_equal(ev.cmd, TCMU_CMD_ADDED_DEVICE);
	assert_string_equal(ev.device, dev);
	assert_int_equal(ev.minor, 5);
	assert_int_equal(ev.device_id, 7);
	assert_false(ev.has_size);
	assert_false(ev.has_writecache);
}

static void test_reconfig(void **state)
{
	struct tcmu_nl_event ev;
	uint64_t size = 1ull << 33;
	uint8_t wc = 1;
	struct msg m;

	(void)state;
	msg_start(&m, FAMILY, TCMU_CMD_RECONFIG_DEVICE);
	msg_attr(&m, TCMU_ATTR_DEVICE, dev, sizeof(dev));
	msg_attr(&m, TCMU_ATTR_DEV_SIZE, &size, 8);
	msg_attr(&m, TCMU_ATTR_WRITECACHE, &wc, 1); /* padded to 4 */
	msg_attr(&m, TCMU_ATTR_DEV_CFG, "sdswarm/x", 10);
	msg_end(&m);
	assert_int_equal(tcmu_nl_parse(m.buf, m.len, FAMILY, &ev), 1);
	assert_int_equal(ev.cmd, TCMU_CMD_RECONFIG_DEVICE);
	assert_true(ev.has_size);
	assert_int_equal(ev.dev_size, size);
	assert_true(ev.has_writecache);
	assert_int_equal(ev.writecache, 1);
	assert_string_equal(ev.dev_config, "sdswarm/x");
	assert_int_equal(ev.minor, -1);
}

static void test_other_family(void **state)
{
	struct tcmu_nl_event ev;
	struct msg m;

	(void)state;
	msg_start(&m, FAMILY + 1, TCMU_CMD_ADDED_DEVICE);
	msg_attr(&m, TCMU_ATTR_DEVICE, dev, sizeof(dev));
	msg_end(&m);
	assert_int_equal(tcmu_nl_parse(m.buf, m.len, FAMILY, &ev), 0);
}

static void test_malformed(void **state)
{
	struct tcmu_nl_event ev;
	struct nlattr bad = {.nla_len = 200, .nla_type = TCMU_ATTR_DEVICE};
	struct msg m;

	(void)state;
	msg_start(&m, FAMILY, TCMU_CMD_REMOVED_DEVICE);
	msg_attr(&m, TCMU_ATTR_DEVICE, dev, sizeof(dev));
	msg_end(&m);
	/* fewer bytes than the header says */
	assert_int_equal(tcmu_nl_parse(m.buf, m.len - 4, FAMILY, &ev), -EPROTO);
	assert_int_equal(tcmu_nl_parse(m.buf, 8, FAMILY, &ev), -EPROTO);
	/* an attribute longer than the message */
	msg_start(&m, FAMILY, TCMU_CMD_REMOVED_DEVICE);
	memcpy(m.buf + m.len, &bad, sizeof(bad));
	m.len += 8;
	msg_end(&m);
	assert_int_equal(tcmu_nl_parse(m.buf, m.len, FAMILY, &ev), -EPROTO);
}

/* A device name longer than the event's field is cut, not overrun. */
static void test_long_name(void **state)
{
	struct tcmu_nl_event ev;
	char name[300];
	struct msg m;

	(void)state;
	memset(name, 'x', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	msg_start(&m, FAMILY, TCMU_CMD_ADDED_DEVICE);
	msg_attr(&m, TCMU_ATTR_DEVICE, name, sizeof(name));
	msg_end(&m);
	assert_int_equal(tcmu_nl_parse(m.buf, m.len, FAMILY, &ev), 1);
	assert_int_equal(strlen(ev.device), sizeof(ev.device) - 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_added),
		cmocka_unit_test(test_reconfig),
		cmocka_unit_test(test_other_family),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_long_name),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
