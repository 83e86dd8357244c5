/* SPDX-License-Identifier: MIT */
/*
 * The configuration: an INI file (split by config.c itself) plus command-line
 * overrides, checked as a whole, into plain structs the daemon and the
 * front ends read. Every error names the file, the line, the section, the
 * key, the value and why; all of them are collected, not just the first.
 */
#ifndef SDSWARM_CONFIG_H
#define SDSWARM_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "fault.h"
#include "lun.h"
#include "scsi/scsi.h"
#include "sdnum.h"
#include "store/store.h"

/* Longest Unix socket path (sizeof(sun_path) - 1). */
#define CFG_SOCKET_PATH_MAX 107
/* Longest path otherwise (a directory, a mount point). */
#define CFG_PATH_MAX 4095
/* Longest line in a configuration file, newline excluded. */
#define CFG_LINE_MAX 4000
/* iSCSI names are at most 223 bytes (RFC 7143, 4.2.7.1). */
#define CFG_ISCSI_NAME_MAX 223
#define CFG_ISCSI_MAX_TARGETS 16
#define CFG_ISCSI_MAX_INITIATORS 64
/* Portals: each one a target port, relative target port 1..16 in order. */
#define CFG_ISCSI_MAX_PORTALS SCSI_ALUA_MAX_PORTS
#define CFG_MAX_PORT_GROUPS SCSI_ALUA_MAX_GROUPS
/* Flat space addressing reaches LUN 16383 (SAM-5). */
#define CFG_ISCSI_MAX_LUNS_PER_TARGET 16384u
#define CFG_CHAP_MAX 255
/* Most messages one parse collects; later ones are counted, not kept. */
#define CFG_MAX_ERRORS 50
/* The name of the embedded default, in messages. */
#define CFG_BUILTIN_NAME "(built-in default)"

/**
 * struct cfg_target - [target]: identity and naming.
 * @seed: target seed: serials and WWNs (give two daemons different ones).
 * @oui: IEEE OUI in the WWNs, 24 bits; 0 is AC-DE-48 (private use).
 * @max_luns: LUN numbers are 0..max_luns-1 inclusive.
 * @scheme: the sdnum scheme predicted names and dev_ts follow.
 * @name_prefix: the driver prefix of predicted names ("sd").
 * @control: the control socket path; "" for the default (ctl_default_path()).
 * @log_level: LOG_EMERG..LOG_TRACE.
 * @control_idle_timeout: seconds a control client may stay silent; 0 never;
 *	default CFG_CONTROL_IDLE_DEFAULT.
 * @syslog: log to syslog as well as stderr (sdswarmd --syslog).
 */
#define CFG_CONTROL_IDLE_DEFAULT 30

struct cfg_target {
	uint64_t seed;
	uint32_t oui;
	uint32_t max_luns;
	const struct sdnum_scheme *scheme;
	char name_prefix[SDNUM_MAX_PREFIX + 1];
	char control[CFG_SOCKET_PATH_MAX + 1];
	int log_level;
	bool power_on_ua; /* POWER ON OCCURRED on each LUN's first command */
	uint32_t control_idle_timeout;
	bool syslog;
};

enum cfg_store_type {
	CFG_STORE_MEM = 0,
	CFG_STORE_FILE,
};

/**
 * struct cfg_store - [store]: where blocks live.
 * @type: mem or file.
 * @mem: chunk_size, mem_limit, shards (type mem).
 * @dir: the directory of the file store (type file).
 * @max_open_files: the file store's fd cache (type file).
 */
struct cfg_store {
	enum cfg_store_type type;
	struct store_mem_params mem;
	char dir[CFG_PATH_MAX + 1];
	unsigned int max_open_files;
	unsigned int file_mode; /* LUN files: rw bits, 0600 by default */
};

/**
 * struct cfg_portal - one listening address of the iSCSI front end.
 * @text: "HOST:PORT" as written.
 * @host: a numeric IPv4 or IPv6 address (IPv6 without its brackets).
 * @port: 1..65535, or 0 for a free port the kernel picks at listen
 *	(iscsi_fe_portal() then tells which; the daemon writes it back).
 */
struct cfg_portal {
	char text[64];
	char host[48];
	uint16_t port;
};

/**
 * struct cfg_iscsi - [iscsi]: for the iSCSI front end.
 * @enabled: serve iSCSI.
 * @portal: the first portal, "HOST:PORT" as written; @host and @port are
 *	its parts (an IPv6 host without its brackets).
 * @host: a numeric IPv4 or IPv6 address.
 * @port: 0..65535 (0: see struct cfg_portal).
 * @nportals: entries in @portals, 1..CFG_ISCSI_MAX_PORTALS.
 * @portals: every portal, in the order written: portal i is relative
 *	target port i + 1 of every target, with target portal group tag
 *	i + 1, so each is a path of its own to every LUN.
 * @targets: targets served, 1..CFG_ISCSI_MAX_TARGETS; target i has the name
 *	"@iqn_prefix:t<i>" and table LUNs i * @luns_per_target onwards.
 * @iqn_prefix: see @targets.
 * @luns_per_target: 1..16384.
 * @chap_user: CHAP name the initiator must give ("" for no CHAP).
 * @chap_secret: its secret.
 * @mutual_user: the name the target answers with (mutual CHAP), or "".
 * @mutual_secret: its secret.
 * @ninitiators: entries in @initiators; 0 lets any initiator in.
 * @initiators: the initiator names allowed to log in.
 * @max_sessions: most sessions at once; 0 is no limit.
 * @threads: I/O threads.
 * @max_recv_data_segment_length: the target's MaxRecvDataSegmentLength.
 * @max_burst_length: MaxBurstLength offered.
 * @first_burst_length: FirstBurstLength offered.
 * @immediate_data: ImmediateData offered.
 * @initial_r2t: InitialR2T offered.
 * @nop_interval: seconds a connection may be idle before the target pings
 *	it with a NOP-In; 0 never pings.
 * @nop_timeout: seconds a ping may go unanswered before the connection
 *	is dropped.
 * @max_buffer_per_connection: bytes of command data buffers (Data-Out
 *	being collected, Data-In waiting to go) one connection may hold;
 *	past it a command gets TASK SET FULL.
 * @max_buffer_per_initiator: the same over all connections of one
 *	initiator (its iSCSI name: every session and ISID); past it, TASK
 *	SET FULL. Unset, a quarter of @max_buffer, at least
 *	@max_buffer_per_connection.
 * @max_buffer: the same over all connections; past it, BUSY.
 * @max_login_connections: connections not yet logged in, at once; more
 *	are closed at accept.
 * @max_login_per_address: the same per source address.
 * @login_timeout: seconds a connection may take to log in.
 * @login_timeout_busy: the same while over half of @max_login_connections
 *	are taken (the smaller of the two counts).
 */
struct cfg_iscsi {
	bool enabled;
	char portal[64];
	char host[48];
	uint16_t port;
	unsigned int nportals;
	struct cfg_portal portals[CFG_ISCSI_MAX_PORTALS];
	unsigned int targets;
	char iqn_prefix[CFG_ISCSI_NAME_MAX + 1];
	uint32_t luns_per_target;
	char chap_user[CFG_CHAP_MAX + 1];
	char chap_secret[CFG_CHAP_MAX + 1];
	char mutual_user[CFG_CHAP_MAX + 1];
	char mutual_secret[CFG_CHAP_MAX + 1];
	unsigned int ninitiators;
	char initiators[CFG_ISCSI_MAX_INITIATORS][CFG_ISCSI_NAME_MAX + 1];
	unsigned int max_sessions;
	unsigned int threads;
	uint32_t max_recv_data_segment_length;
	uint32_t max_burst_length;
	uint32_t first_burst_length;
	bool immediate_data;
	bool initial_r2t;
	unsigned int nop_interval;
	unsigned int nop_timeout;
	uint64_t max_buffer_per_connection;
	uint64_t max_buffer_per_initiator;
	uint64_t max_buffer;
	unsigned int max_login_connections;
	unsigned int max_login_per_address;
	unsigned int login_timeout;
	unsigned int login_timeout_busy;
};

enum cfg_tcmu_fabric {
	CFG_TCMU_LOOPBACK = 0, /* export through the tcm_loop fabric */
	CFG_TCMU_NONE, /* backstores only; the user wires a fabric */
};

/**
 * struct cfg_tcmu - [tcmu]: for the TCMU front end (LIO backstores).
 * @enabled: create the backstores.
 * @hba: the configfs HBA directory, "user_<N>".
 * @name_prefix: backstore names are "<name_prefix><LUN>".
 * @ring_size: the data area of each device's ring, bytes (whole MiB):
 *	max_data_area_mb, the most data the device's commands in flight
 *	can carry.
 * @cmd_ring_size: the command ring of each device, bytes (whole MiB):
 *	cmd_ring_size_mb, vmalloc'd by the kernel for the device's life.
 * @fabric: how the backstores are exported.
 */
struct cfg_tcmu {
	bool enabled;
	char hba[32];
	char name_prefix[32];
	uint64_t ring_size;
	uint64_t cmd_ring_size;
	enum cfg_tcmu_fabric fabric;
};

/**
 * struct cfg_fuse - [fuse]: for the FUSE front end.
 * @enabled: true when @mountpoint is set.
 * @mountpoint: where every disk and partition appears as a file.
 * @threads: FUSE worker threads.
 * @options: extra mount options, comma separated ("allow_other").
 * @attr_timeout: seconds the kernel may cache names and attributes
 *	(every change is also invalidated as it happens).
 * @cache: CFG_FUSE_CACHE_PAGE (the kernel's page cache, no OPEN) or
 *	CFG_FUSE_CACHE_DIRECT (every read and write a request).
 * @prefetch: bytes of each file pushed into the page cache at READDIRPLUS
 *	(page cache only); 0: none.
 * @prefetch_budget: most bytes prefetch may push over all files; when
 *	every file's @prefetch would not fit, prefetch is off.
 */
enum cfg_fuse_cache {
	CFG_FUSE_CACHE_PAGE = 0,
	CFG_FUSE_CACHE_DIRECT,
};

struct cfg_fuse {
	bool enabled;
	char mountpoint[CFG_PATH_MAX + 1];
	unsigned int threads;
	char options[256];
	double attr_timeout;
	enum cfg_fuse_cache cache;
	uint64_t prefetch;
	uint64_t prefetch_budget;
};

/**
 * struct cfg_range - a group's range.N = A[-B] [size=S] [offline]: LUNs
 * A..B (inclusive) of group @group, made at start beyond those of first and
 * count, with their own size and state (a table `sdswarm save-config`
 * wrote: holes, resized and offline LUNs).
 * @group: index into struct cfg.groups.
 * @first: first LUN.
 * @last: last LUN, inclusive.
 * @size: bytes, a multiple of the group's block_size; 0: the group's size.
 * @offline: the LUNs start offline.
 */
struct cfg_range {
	unsigned int group;
	uint32_t first, last;
	uint64_t size;
	bool offline;
};

/**
 * struct cfg_port_group - [port_group.NAME]: one ALUA target port group.
 * @name: NAME.
 * @id: TARGET PORT GROUP, 1..65535, unique.
 * @state: the asymmetric access state at start (enum scsi_alua_state).
 * @ports: bit p - 1 set for each relative target port p in the group.
 */
struct cfg_port_group {
	char name[SCSI_ALUA_NAME_MAX + 1];
	uint16_t id;
	uint8_t state;
	uint32_t ports;
};

/**
 * struct cfg - a whole, checked configuration.
 * @source: the file it came from, or CFG_BUILTIN_NAME.
 * @target: [target].
 * @store: [store].
 * @ngroups: entries in @groups.
 * @groups: [luns] (named "default") and [luns.NAME], in file order, each
 *	ready for lun_group_add() (partition sizes in blocks).
 * @nfaults: entries in @faults.
 * @faults: [faults] rules in file order, ready for fault_add().
 * @iscsi: [iscsi].
 * @tcmu: [tcmu].
 * @fuse: [fuse].
 * @nport_groups: entries in @port_groups; 0: no ALUA.
 * @port_groups: [port_group.NAME] sections in file order; with any, every
 *	portal is in exactly one.
 * @nranges: entries in @ranges.
 * @ranges: the groups' range.N keys, LUNs made beyond first and count.
 * @settings: the keys set outside the groups and [faults], as "[section]"
 *	and "key = value" lines in the order of the key tables, the command
 *	line's overrides included ([port_group.NAME] excluded: their states
 *	change at run time); what `sdswarm save-config` writes back.
 * @group_settings: per group, its keys other than first, count and
 *	range.N as "key = value" lines.
 */
struct cfg {
	char source[CFG_PATH_MAX + 1];
	struct cfg_target target;
	struct cfg_store store;
	unsigned int ngroups;
	struct lun_group *groups;
	unsigned int nfaults;
	struct fault_rule *faults;
	struct cfg_iscsi iscsi;
	struct cfg_tcmu tcmu;
	struct cfg_fuse fuse;
	unsigned int nport_groups;
	struct cfg_port_group port_groups[CFG_MAX_PORT_GROUPS];
	unsigned int nranges;
	struct cfg_range *ranges;
	char *settings;
	char **group_settings;
};

struct cfg_parser;

/**
 * cfg_parser_create() - a parser holding every default.
 * @out: out, the parser.
 *
 * Context: any thread; parsers share no state, so several may run at once.
 * Return: 0, -ENOMEM.
 */
int cfg_parser_create(struct cfg_parser **out);

/**
 * cfg_parser_destroy() - free a parser. NULL is a no-op.
 * @p: the parser.
 */
void cfg_parser_destroy(struct cfg_parser *p);

/**
 * cfg_parse_file() - read a configuration file (at most once per parser).
 * @p: the parser.
 * @path: the file.
 *
 * Errors are collected (cfg_errors()); parsing goes on past them.
 * Return: 0; -EINVAL if the file had errors; -EALREADY if a source was
 * already parsed; the -errno of opening or reading the file.
 */
int cfg_parse_file(struct cfg_parser *p, const char *path);

/**
 * cfg_parse_stream() - cfg_parse_file() on a stream the caller opened
 * (and closes), read from where it stands to its end.
 * @p: the parser.
 * @name: the name messages give for it.
 * @f: the stream.
 *
 * Return: as cfg_parse_file().
 */
int cfg_parse_stream(struct cfg_parser *p, const char *name, FILE *f);

/**
 * cfg_parse_string() - cfg_parse_file() on text in memory.
 * @p: the parser.
 * @name: the name messages give for it.
 * @text: the configuration, NUL-terminated.
 *
 * Return: as cfg_parse_file().
 */
int cfg_parse_string(struct cfg_parser *p, const char *name, const char *text);

/**
 * cfg_override() - set one key from the command line, replacing what the
 * file said. Call after cfg_parse_file() (or with no file at all).
 * @p: the parser.
 * @section: "target", "store", "fuse"... (not a LUN group).
 * @key: the key.
 * @value: its text, parsed exactly as in a file.
 *
 * Messages about it begin "command line:" instead of "FILE:LINE:".
 * Return: 0, -EINVAL (recorded in cfg_errors()).
 */
int cfg_override(struct cfg_parser *p, const char *section, const char *key,
		 const char *value);

/**
 * cfg_override_luns() - the --luns flag: create @total LUNs at start.
 * @p: the parser.
 * @total: LUNs wanted.
 *
 * Groups, in order of their first LUN, keep their count until @total is
 * reached; later ones get count 0 (they stay, for `lun add`). If @total is
 * more than the file's sum, the last group grows by the difference.
 * Applied by cfg_finish(), which then checks the ranges as usual.
 */
void cfg_override_luns(struct cfg_parser *p, uint32_t total);

/**
 * cfg_finish() - check the whole configuration and hand it out.
 * @p: the parser.
 * @out: out, the configuration (free with cfg_free()), only on success.
 *
 * Checks what no single key can: LUN ranges against each other and
 * max_luns, partition layouts (ptable_check()), sizes against block sizes,
 * store keys against the store type, CHAP pairs, fault LUN ranges. With
 * no source parsed, the configuration is all defaults (no LUNs).
 * Return: 0; -EINVAL if this or any earlier step found an error (see
 * cfg_errors()); -ENOMEM.
 */
int cfg_finish(struct cfg_parser *p, struct cfg **out);

/**
 * cfg_errors() - every message collected so far, one per line, each ending
 * in a newline ("" when there are none).
 * @p: the parser.
 *
 * Return: a string owned by @p, valid until its next call.
 */
const char *cfg_errors(const struct cfg_parser *p);

/**
 * cfg_error_count() - how many errors were found (kept or not).
 * @p: the parser.
 *
 * Return: the count.
 */
unsigned int cfg_error_count(const struct cfg_parser *p);

/**
 * cfg_free() - free a configuration from cfg_finish(). NULL is a no-op.
 * @c: the configuration.
 */
void cfg_free(struct cfg *c);

/**
 * cfg_default_text() - the embedded default configuration, the same text
 * as configs/default.conf.
 *
 * Return: a static string.
 */
const char *cfg_default_text(void);

/**
 * cfg_total_luns() - LUNs the configuration creates at start.
 * @c: the configuration.
 *
 * Return: the sum of the groups' counts.
 */
uint64_t cfg_total_luns(const struct cfg *c);

/**
 * cfg_format_size() - a byte count in the shortest exact form
 * parse_size() (common/parse.h) reads back ("1T", "1536K", "1000").
 * @bytes: the count.
 * @buf: out, NUL-terminated.
 * @len: its size; 24 always suffices.
 *
 * Return: the length written, or -ENOSPC.
 */
int cfg_format_size(uint64_t bytes, char *buf, size_t len);

/**
 * cfg_iscsi_name_valid() - whether @name is an iSCSI name of one of RFC
 * 3722's forms, as a peer must send it: "iqn." yyyy-mm "." reversed
 * domain [":" anything] in lower case, digits, '.', '-' and ':'; "eui."
 * and 16 hex digits; "naa." and 16 or 32 hex digits; at most
 * CFG_ISCSI_NAME_MAX bytes.
 * @name: the name.
 *
 * Context: any; pure.
 * Return: true or false.
 */
bool cfg_iscsi_name_valid(const char *name);

/**
 * cfg_alua() - the ALUA port groups of a configuration, ready for
 * struct scsi_target.alua.
 * @c: the configuration.
 * @out: out, filled (states as configured).
 *
 * Return: 1 with @out filled when the configuration has port groups; 0
 * (@out zeroed) without: no ALUA.
 */
int cfg_alua(const struct cfg *c, struct scsi_alua *out);

/**
 * cfg_iscsi_target_name() - the IQN of iSCSI target @i ("PREFIX:tI").
 * @c: [iscsi].
 * @i: 0..@c->targets - 1.
 * @buf: out.
 * @len: its size, CFG_ISCSI_NAME_MAX + 1 suffices.
 *
 * Return: the length, -ENOSPC, -ERANGE.
 */
int cfg_iscsi_target_name(const struct cfg_iscsi *c, unsigned int i, char *buf,
			  size_t len);

#endif /* SDSWARM_CONFIG_H */
