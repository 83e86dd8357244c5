// SPDX-License-Identifier: MIT
/*
 * sdswarmd: the target daemon. Reads the configuration, builds the store,
 * the LUN table and the fault table, opens the control socket, starts the
 * front ends, and serves until SIGTERM or SIGINT; then shuts down in
 * reverse and flushes the store. Runs in the foreground: a supervisor (or
 * a test) owns its lifetime. Readiness (the pidfile, sd_notify) is told
 * only once every front end serves; --run runs a command then and stops
 * when it ends.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "array.h"
#include "cli.h"
#include "config.h"
#include "control.h"
#include "fault.h"
#include "frontend/fuse/fusefe.h"
#include "frontend/iscsi/iscsi.h"
#include "frontend/tcmu/tcmu.h"
#include "log.h"
#include "lun.h"
#include "parse.h"
#include "scsi/scsi.h"
#include "store/store.h"
#include "target.h"

/* Each front end gets the target and its own section, nothing else. */
static int start_iscsi(const struct cfg *c, struct target *t, void **state)
{
	return iscsi_fe_start(&c->iscsi, t, state);
}

static int start_tcmu(const struct cfg *c, struct target *t, void **state)
{
	return tcmu_fe_start(&c->tcmu, t, state);
}

static int start_fuse(const struct cfg *c, struct target *t, void **state)
{
	return fusefe_start(&c->fuse, t, state);
}

/*
 * The front ends. Each start() hands one its section of the configuration
 * and returns 0 when it is running, 1 when the configuration does not ask
 * for it, or -errno; stop() undoes a start() that returned 0. They start
 * in table order and the daemon stops them in reverse order.
 */
struct frontend {
	const char *name;
	int (*start)(const struct cfg *c, struct target *t, void **state);
	void (*stop)(void *state);
};

static const struct frontend frontends[] = {
	{.name = "iscsi", .start = start_iscsi, .stop = iscsi_fe_stop},
	{.name = "tcmu", .start = start_tcmu, .stop = tcmu_fe_stop},
	{.name = "fuse", .start = start_fuse, .stop = fusefe_stop},
	{.name = NULL},
};

#define NFRONTENDS (ARRAY_SIZE(frontends))

struct opts {
	const char *config;
	const char *control;
	const char *store_dir;
	const char *mem_limit;
	const char *fuse;
	const char *iscsi; /* "" for the configured (or default) portal */
	const char *pidfile;
	const char *luns;
	uint32_t nluns;
	const char *run;
	int verbose;
	bool tcmu;
	bool syslog;
	bool check;
	bool exit_with_parent;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: sdswarmd [--config FILE] [--control PATH] [--store DIR]\n"
		"                [--mem-limit SIZE] [--luns N] [--fuse DIR]\n"
		"                [--iscsi [ADDR:PORT]] [--tcmu] [--pidfile PATH]\n"
		"                [--run CMD] [--exit-with-parent] [-v|-vv|-vvv]\n"
		"                [--check] [--version]\n"
		"  -c, --config FILE   the configuration (default: the built-in one,\n"
		"                      18,279 disks; see sdswarm.conf(5))\n"
		"      --control PATH  the control socket (default: $SDSWARM_CONTROL,\n"
		"                      else one under $XDG_RUNTIME_DIR; when another\n"
		"                      daemon has it, and always with --run: PATH.PID)\n"
		"      --store DIR     keep data in DIR (the file store)\n"
		"      --mem-limit SIZE  cap the mem store (K, M, G, T, P)\n"
		"      --luns N        create N LUNs at start\n"
		"      --fuse DIR      mount the FUSE front end on DIR\n"
		"      --iscsi [ADDR:PORT]  serve iSCSI (default portal 127.0.0.1:3260;\n"
		"                      port 0: a free one, logged and in $SDSWARM_PORTAL)\n"
		"      --tcmu          export the LUNs as LIO TCMU backstores (root)\n"
		"      --syslog        log to syslog (facility daemon) as well as stderr\n"
		"      --pidfile PATH  write the daemon's PID there once every front end\n"
		"                      serves (as is READY=1 to $NOTIFY_SOCKET)\n"
		"      --run CMD       once ready, run CMD with /bin/sh, then stop and exit\n"
		"                      with its status; $SDSWARM_CONTROL, $SDSWARM_MOUNT,\n"
		"                      $SDSWARM_PORTAL tell it where the daemon serves\n"
		"      --exit-with-parent  stop when the parent process exits\n"
		"  -v                  log info; -vv debug; -vvv every CDB\n"
		"      --foreground    run in the foreground (always the case)\n"
		"      --check         check the configuration, build the LUN table,\n"
		"                      print a summary and exit\n"
		"  -V, --version       print the version and exit\n"
		"  -h, --help          this text\n"
		"Exit status: 0 stopped cleanly (or --check passed), 1 failed, 2 usage\n"
		"error; with --run, the command's own status.\n");
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
	enum {
		O_CONTROL = 256,
		O_STORE,
		O_MEM_LIMIT,
		O_LUNS,
		O_FUSE,
		O_PIDFILE,
		O_FOREGROUND,
		O_CHECK,
		O_ISCSI,
		O_TCMU,
		O_RUN,
		O_EXIT_WITH_PARENT,
		O_SYSLOG
	};
	static const struct option longopts[] = {
		{"config", required_argument, NULL, 'c'},
		{"control", required_argument, NULL, O_CONTROL},
		{"store", required_argument, NULL, O_STORE},
		{"mem-limit", required_argument, NULL, O_MEM_LIMIT},
		{"luns", required_argument, NULL, O_LUNS},
		{"fuse", required_argument, NULL, O_FUSE},
		{"pidfile", required_argument, NULL, O_PIDFILE},
		{"foreground", no_argument, NULL, O_FOREGROUND},
		{"check", no_argument, NULL, O_CHECK},
		{"iscsi", optional_argument, NULL, O_ISCSI},
		{"tcmu", no_argument, NULL, O_TCMU},
		{"syslog", no_argument, NULL, O_SYSLOG},
		{"run", required_argument, NULL, O_RUN},
		{"exit-with-parent", no_argument, NULL, O_EXIT_WITH_PARENT},
		{"verbose", no_argument, NULL, 'v'},
		{"version", no_argument, NULL, 'V'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c;

	while ((c = getopt_long(argc, argv, "c:vVh", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			o->config = optarg;
			break;
		case O_CONTROL:
			o->control = optarg;
			break;
		case O_STORE:
			o->store_dir = optarg;
			break;
		case O_MEM_LIMIT:
			o->mem_limit = optarg;
			break;
		case O_LUNS:
			o->luns = optarg;
			break;
		case O_FUSE:
			o->fuse = optarg;
			break;
		case O_PIDFILE:
			o->pidfile = optarg;
			break;
		case O_FOREGROUND:
			break;
		case O_CHECK:
			o->check = true;
			break;
		case O_SYSLOG:
			o->syslog = true;
			break;
		case O_ISCSI:
			/* the portal may follow as its own word: sdswarmd
			 * takes no other operands */
			if (!optarg && optind < argc && argv[optind][0] != '-')
				optarg = argv[optind++];
			o->iscsi = optarg ? optarg : "";
			break;
		case O_TCMU:
			o->tcmu = true;
			break;
		case O_RUN:
			o->run = optarg;
			break;
		case O_EXIT_WITH_PARENT:
			o->exit_with_parent = true;
			break;
		case 'v':
			o->verbose++;
			break;
		case 'V':
			exit(cli_print_version("sdswarmd"));
		case 'h':
			usage(stdout);
			exit(0);
		default:
			cli_suggest_option(stderr, "sdswarmd", longopts,
					   argv[optind - 1]);
			fprintf(stderr, "Try 'sdswarmd --help'.\n");
			return -1;
		}
	}
	if (o->luns) {
		if (parse_u32(o->luns, 10, LUN_MAX_LUNS, &o->nluns)) {
			fprintf(stderr,
				"sdswarmd: --luns %s: not a number from 0 to %u\n",
				o->luns, LUN_MAX_LUNS);
			return -1;
		}
	}
	if (o->check && o->run) {
		fprintf(stderr,
			"sdswarmd: --check and --run exclude each other\n");
		return -1;
	}
	if (optind < argc) {
		fprintf(stderr,
			"sdswarmd: unexpected argument '%s' (sdswarmd takes only options; see --help)\n",
			argv[optind]);
		return -1;
	}
	return 0;
}

/* The configuration file (or the built-in one) and the flags over it. */
static int load_config(const struct opts *o, struct cfg **out)
{
	static const char *const levels[] = {"info", "debug", "trace"};
	struct cfg_parser *p;
	int ret;

	ret = cfg_parser_create(&p);
	if (ret) {
		fprintf(stderr, "sdswarmd: %s\n", strerror(-ret));
		return ret;
	}
	if (o->config)
		cfg_parse_file(p, o->config);
	else
		cfg_parse_string(p, CFG_BUILTIN_NAME, cfg_default_text());
	if (o->control)
		cfg_override(p, "target", "control", o->control);
	if (o->store_dir) {
		cfg_override(p, "store", "type", "file");
		cfg_override(p, "store", "dir", o->store_dir);
	}
	if (o->mem_limit)
		cfg_override(p, "store", "mem_limit", o->mem_limit);
	if (o->fuse)
		cfg_override(p, "fuse", "mountpoint", o->fuse);
	if (o->iscsi) {
		cfg_override(p, "iscsi", "enabled", "yes");
		if (o->iscsi[0])
			cfg_override(p, "iscsi", "portal", o->iscsi);
	}
	if (o->tcmu)
		cfg_override(p, "tcmu", "enabled", "yes");
	if (o->syslog)
		cfg_override(p, "target", "syslog", "yes");
	if (o->verbose)
		cfg_override(p, "target", "log_level",
			     levels[o->verbose > 3 ? 2 : o->verbose - 1]);
	if (o->luns)
		cfg_override_luns(p, o->nluns);
	ret = cfg_finish(p, out);
	if (ret)
		fputs(cfg_errors(p), stderr);
	cfg_parser_destroy(p);
	return ret;
}

static double ms_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) * 1e3 +
	       (double)(t1.tv_nsec - t0->tv_nsec) / 1e6;
}

static int make_store(const struct cfg *c, struct store **out)
{
	struct store_file_params fp = {.dir = c->store.dir,
				       .max_open_files =
					       c->store.max_open_files,
				       .file_mode = c->store.file_mode};
	int ret;

	if (c->store.type == CFG_STORE_MEM)
		ret = store_mem_create(out, &c->store.mem);
	else
		ret = store_file_create(out, &fp);
	if (ret == -EBUSY)
		log_err("store: %s is in use by another sdswarmd",
			c->store.dir);
	else if (ret)
		log_err("store: cannot create the %s store%s%s: %s",
			c->store.type == CFG_STORE_MEM ? "mem" : "file",
			c->store.type == CFG_STORE_MEM ? "" : " in ",
			c->store.type == CFG_STORE_MEM ? "" : c->store.dir,
			strerror(-ret));
	return ret;
}

/* The LUN table and its groups; logs how long it took and what it costs. */
static int make_luns(const struct cfg *c, struct store *store,
		     struct lun_table **out, double *ms)
{
	struct lun_table_params tp = {
		.max_luns = c->target.max_luns,
		.seed = c->target.seed,
		.oui = c->target.oui,
		.store = store,
		.no_power_on_ua = !c->target.power_on_ua,
	};
	struct lun_table *t;
	struct timespec t0;
	unsigned int i;
	int ret;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	ret = lun_table_create(&t, &tp);
	if (ret) {
		log_err("LUN table for %u LUNs: %s", c->target.max_luns,
			strerror(-ret));
		return ret;
	}
	for (i = 0; i < c->ngroups; i++) {
		ret = lun_group_add(t, &c->groups[i]);
		if (ret < 0) {
			log_err("LUN group %s (LUNs %u+%u): %s",
				c->groups[i].name, c->groups[i].first,
				c->groups[i].count, strerror(-ret));
			lun_table_destroy(t);
			return ret;
		}
	}
	for (i = 0; i < c->nranges; i++) {
		const struct cfg_range *r = &c->ranges[i];
		uint32_t l;

		for (l = r->first; l <= r->last; l++) {
			ret = lun_add_as(t, l, r->group, r->size,
					 r->offline ? LUN_OFFLINE : LUN_ONLINE);
			if (ret < 0) {
				log_err("LUN %u of group %s: %s", l,
					c->groups[r->group].name,
					strerror(-ret));
				lun_table_destroy(t);
				return ret;
			}
			if (l == UINT32_MAX)
				break;
		}
	}
	*ms = ms_since(&t0);
	*out = t;
	return 0;
}

static int make_faults(const struct cfg *c, struct fault_table **out)
{
	struct fault_table *ft;
	unsigned int i;
	int ret;

	ret = fault_table_create(&ft);
	if (ret) {
		log_err("fault table: %s", strerror(-ret));
		return ret;
	}
	for (i = 0; i < c->nfaults; i++) {
		ret = fault_add(ft, &c->faults[i]);
		if (ret < 0) {
			log_err("fault rule %u: %s", i + 1, strerror(-ret));
			fault_table_destroy(ft);
			return ret;
		}
	}
	*out = ft;
	return 0;
}

/*
 * Every present LUN must be reachable through the iSCSI front end when it
 * is on: target i exports table LUNs i * luns_per_target onwards, so the
 * LUNs from targets * luns_per_target up would be exported by no target.
 * Such a configuration is refused, with the numbers, rather than started
 * serving less than it says. (A LUN added later through the control
 * socket past the reach is served by the other front ends only.)
 */
static int check_fit(const struct cfg *c, const struct lun_table *t)
{
	uint64_t reach;
	uint32_t n = 0, last = 0;
	int first, l;

	if (!c->iscsi.enabled)
		return 0;
	reach = (uint64_t)c->iscsi.targets * c->iscsi.luns_per_target;
	if (reach >= lun_max(t))
		return 0;
	first = lun_find(t, (uint32_t)reach, UINT32_MAX);
	if (first < 0)
		return 0;
	lun_for_each(t, l, (uint32_t)first, UINT32_MAX) {
		n++;
		last = (uint32_t)l;
	}
	log_err("iscsi: %u LUNs, but %u target%s x %u LUNs (luns_per_target) export only LUNs 0-%" PRIu64
		"; %u LUN%s (%d-%u) would be reachable by no target: raise [iscsi] targets (at most %u) or luns_per_target (at most %u), or create fewer LUNs",
		lun_count(t), c->iscsi.targets,
		c->iscsi.targets == 1 ? "" : "s", c->iscsi.luns_per_target,
		reach - 1, n, n == 1 ? "" : "s", first, last,
		CFG_ISCSI_MAX_TARGETS, CFG_ISCSI_MAX_LUNS_PER_TARGET);
	return -ERANGE;
}

/* The front ends a configuration asks for, as words, or "none". */
static void describe_frontends(const struct cfg *c, char *buf, size_t len)
{
	int n = 0;

	buf[0] = '\0';
	if (c->iscsi.enabled)
		n += snprintf(buf + n, len - (size_t)n, "iscsi on %s",
			      c->iscsi.portal);
	if (c->tcmu.enabled && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, "%stcmu",
			      n ? ", " : "");
	if (c->fuse.enabled && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, "%sfuse on %s",
			      n ? ", " : "", c->fuse.mountpoint);
	if (!n)
		snprintf(buf, len, "none");
}

static bool any_frontend(const struct cfg *c)
{
	return c->iscsi.enabled || c->tcmu.enabled || c->fuse.enabled;
}

static void describe_store(const struct cfg *c, char *buf, size_t len)
{
	char chunk[24], limit[24];

	if (c->store.type == CFG_STORE_FILE) {
		snprintf(buf, len, "file (%s, %u open files)", c->store.dir,
			 c->store.max_open_files);
		return;
	}
	cfg_format_size(c->store.mem.chunk_size, chunk, sizeof(chunk));
	if (c->store.mem.mem_limit)
		cfg_format_size(c->store.mem.mem_limit, limit, sizeof(limit));
	else
		strcpy(limit, "none");
	snprintf(buf, len, "mem (chunk %s, limit %s, %u shards)", chunk, limit,
		 c->store.mem.shards);
}

static double bytes_per_lun(const struct lun_table *t)
{
	uint32_t n = lun_count(t);

	return n ? (double)lun_table_bytes(t) / n : 0.0;
}

/*
 * --check: everything up to serving, with a mem store standing in for the
 * configured one (a file store would create and lock its directory).
 */
static int check_only(const struct cfg *c)
{
	struct store_mem_params mp = {0};
	struct fault_table *ft;
	struct lun_table *t;
	struct store *store;
	char sdesc[CFG_PATH_MAX + 64], fdesc[CFG_PATH_MAX + 128];
	char paths[80];
	double ms;
	int ret;

	ret = store_mem_create(&store, &mp);
	if (ret) {
		log_err("mem store: %s", strerror(-ret));
		return ret;
	}
	ret = make_luns(c, store, &t, &ms);
	if (ret)
		goto out_store;
	ret = check_fit(c, t);
	if (ret)
		goto out_luns;
	ret = make_faults(c, &ft);
	if (ret)
		goto out_luns;
	describe_store(c, sdesc, sizeof(sdesc));
	describe_frontends(c, fdesc, sizeof(fdesc));
	paths[0] = '\0';
	if (c->iscsi.enabled && (c->iscsi.nportals > 1 || c->nport_groups))
		snprintf(paths, sizeof(paths),
			 ", %u iSCSI portal%s, %u ALUA port group%s",
			 c->iscsi.nportals, c->iscsi.nportals == 1 ? "" : "s",
			 c->nport_groups, c->nport_groups == 1 ? "" : "s");
	printf("%s: ok: %u LUNs, %u group%s, max_luns %u, store %s, %u fault rule%s%s, %.1f bytes/LUN, built in %.1f ms, front ends: %s\n",
	       c->source, lun_count(t), c->ngroups, c->ngroups == 1 ? "" : "s",
	       lun_max(t), sdesc, c->nfaults, c->nfaults == 1 ? "" : "s", paths,
	       bytes_per_lun(t), ms, fdesc);
	fault_table_destroy(ft);
out_luns:
	lun_table_destroy(t);
out_store:
	store_destroy(store);
	return ret;
}

static int write_pidfile(const char *path)
{
	char buf[32];
	int fd, n;
	ssize_t w;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	n = snprintf(buf, sizeof(buf), "%d\n", (int)getpid());
	w = write(fd, buf, (size_t)n);
	if (w != n) {
		int err = w < 0 ? errno : EIO;

		close(fd);
		unlink(path);
		return -err;
	}
	return close(fd) < 0 ? -errno : 0;
}

/* Remove the pidfile only if it is still ours. */
static void remove_pidfile(const char *path)
{
	char buf[32] = {0};
	FILE *f = fopen(path, "re");

	if (!f)
		return;
	if (fgets(buf, sizeof(buf), f) && atoi(buf) == (int)getpid())
		unlink(path);
	fclose(f);
}

static const char *ctl_error(int err)
{
	switch (err) {
	case -EADDRINUSE:
		return "another sdswarmd answers there (stop it, or use --control)";
	case -EEXIST:
		return "exists and is not a socket";
	case -ENAMETOOLONG:
		return "path too long for a Unix socket";
	case -EPERM:
		return "its directory is not safe (it must belong to this user or root and not be writable by others)";
	default:
		return strerror(-err);
	}
}

/* descriptors beside the per-LUN and per-session ones: logs, the control
 * socket and its clients, epoll and eventfds, netlink, /dev/fuse */
#define FD_SLACK 256
/* what a session may be assumed to cost when max_sessions is 0 (no limit) */
#define FD_SESSIONS_UNLIMITED 4096

/* the kernel's ceiling for RLIMIT_NOFILE (fs.nr_open) */
static rlim_t nr_open(void)
{
	unsigned long long v = 0;
	FILE *f = fopen("/proc/sys/fs/nr_open", "re");

	if (f) {
		if (fscanf(f, "%llu", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v ? (rlim_t)v : 1048576;
}

/*
 * Makes room for the descriptors this configuration holds open: one
 * /dev/uioN per TCMU backstore (every LUN the table can hold, since the
 * control socket may add them), one socket per iSCSI session, the file
 * store's cache. The soft limit goes up to the hard one (the default soft
 * limit of 1024 is for select(), which sdswarmd never calls); the hard one
 * goes up to the need when the daemon may raise it (CAP_SYS_RESOURCE).
 * Fails only when the LUNs TCMU exports at start cannot all be opened:
 * that start would fail at the first LUN past the limit, after making the
 * ones before it.
 */
static int raise_nofile(const struct cfg *c, const struct lun_table *t)
{
	unsigned long long need = FD_SLACK, must = 0;
	struct rlimit rl, want;

	if (c->tcmu.enabled) {
		need += lun_max(t);
		must = FD_SLACK + (unsigned long long)lun_count(t);
	}
	if (c->iscsi.enabled)
		need += c->iscsi.max_sessions ? c->iscsi.max_sessions
					      : FD_SESSIONS_UNLIMITED;
	if (c->store.type == CFG_STORE_FILE)
		need += c->store.max_open_files;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0) {
		log_err("getrlimit(RLIMIT_NOFILE): %s", strerror(errno));
		return -errno;
	}
	want = rl;
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < need) {
		rlim_t top = nr_open();

		/* never below what the hard limit already is */
		want.rlim_max = need < top ? need : top;
		if (want.rlim_max < rl.rlim_max)
			want.rlim_max = rl.rlim_max;
	}
	want.rlim_cur = want.rlim_max;
	if (want.rlim_cur != rl.rlim_cur || want.rlim_max != rl.rlim_max) {
		if (setrlimit(RLIMIT_NOFILE, &want) < 0) {
			/* not privileged: the soft limit still may rise */
			want = rl;
			want.rlim_cur = rl.rlim_max;
			if (setrlimit(RLIMIT_NOFILE, &want) < 0)
				want = rl;
		}
		log_info("open files: limit %llu (was %llu), %llu wanted",
			 (unsigned long long)want.rlim_cur,
			 (unsigned long long)rl.rlim_cur, need);
	}
	if (want.rlim_cur != RLIM_INFINITY && want.rlim_cur < must) {
		log_err("tcmu: %u backstores need %llu open files, but RLIMIT_NOFILE is %llu and cannot be raised (ulimit -n, LimitNOFILE=, or run with CAP_SYS_RESOURCE)",
			lun_count(t), must, (unsigned long long)want.rlim_cur);
		return -EMFILE;
	}
	if (want.rlim_cur != RLIM_INFINITY && want.rlim_cur < need)
		log_warn(
			"open files: limit %llu is below the %llu this configuration may hold (TCMU LUNs added later, iSCSI sessions, file store): past it they are refused",
			(unsigned long long)want.rlim_cur, need);
	return 0;
}

/*
 * The iSCSI portals as listening: one written with port 0 has the port
 * the kernel picked now, which the log, $SDSWARM_PORTAL, `sdswarm status`
 * and save-config must say.
 */
static void bound_portals(struct cfg *c, const void *iscsi_state)
{
	struct cfg_portal p;
	unsigned int i;

	for (i = 0; i < c->iscsi.nportals; i++)
		if (!iscsi_fe_portal(iscsi_state, i, &p))
			c->iscsi.portals[i] = p;
	if (!iscsi_fe_portal(iscsi_state, 0, &p)) {
		snprintf(c->iscsi.portal, sizeof(c->iscsi.portal), "%s",
			 p.text);
		c->iscsi.port = p.port;
	}
}

static int start_frontends(const struct cfg *c, struct target *t, void **states,
			   bool *running)
{
	unsigned int i;
	int ret;

	for (i = 0; i < NFRONTENDS && frontends[i].name; i++) {
		ret = frontends[i].start(c, t, &states[i]);
		if (ret == 1)
			continue;
		if (ret < 0) {
			log_err("%s front end: %s", frontends[i].name,
				strerror(-ret));
			return ret;
		}
		running[i] = true;
		log_notice("%s front end started", frontends[i].name);
	}
	return 0;
}

static void stop_frontends(void **states, bool *running)
{
	unsigned int i;

	for (i = NFRONTENDS; i-- > 0;) {
		if (!running[i] || !frontends[i].name)
			continue;
		frontends[i].stop(states[i]);
		running[i] = false;
		log_notice("%s front end stopped", frontends[i].name);
	}
}

/*
 * Tells systemd (or anything listening on $NOTIFY_SOCKET, as
 * sd_notify(3) describes) one state, e.g. "READY=1". The protocol is one
 * datagram on a Unix socket; a name starting with '@' is in the abstract
 * namespace. Failures are logged, never fatal: readiness is advice.
 */
static void notify(const char *state)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	size_t len;
	int fd;

	if (!path || !path[0])
		return;
	len = strlen(path);
	if ((path[0] != '/' && path[0] != '@') || len >= sizeof(sa.sun_path)) {
		log_warn("NOTIFY_SOCKET=%s: not a Unix socket path", path);
		return;
	}
	memcpy(sa.sun_path, path, len);
	if (path[0] == '@')
		sa.sun_path[0] = '\0';
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 ||
	    sendto(fd, state, strlen(state), MSG_NOSIGNAL,
		   (struct sockaddr *)&sa,
		   (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len)) <
		    0)
		log_warn("NOTIFY_SOCKET=%s: %s", path, strerror(errno));
	if (fd >= 0)
		close(fd);
}

/*
 * --run: the command, through /bin/sh -c, with the daemon's addresses in
 * its environment, the daemon's signal mask undone, and NOTIFY_SOCKET
 * removed (readiness is the daemon's to tell). Return: its PID or -errno.
 */
static pid_t run_command(const struct opts *o, const struct cfg *c,
			 const char *control, const sigset_t *oldmask)
{
	char pid[16];
	pid_t child;

	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	fflush(NULL);
	child = fork();
	if (child < 0)
		return -errno;
	if (child > 0)
		return child;
	/* the child: only async-signal-safe calls would be strict, but no
	 * thread of ours holds a lock setenv() needs across a fork */
	sigprocmask(SIG_SETMASK, oldmask, NULL);
	signal(SIGPIPE, SIG_DFL);
	unsetenv("NOTIFY_SOCKET");
	setenv("SDSWARM_CONTROL", control, 1);
	setenv("SDSWARM_PID", pid, 1);
	if (c->fuse.enabled)
		setenv("SDSWARM_MOUNT", c->fuse.mountpoint, 1);
	else
		unsetenv("SDSWARM_MOUNT");
	if (c->iscsi.enabled) {
		setenv("SDSWARM_PORTAL", c->iscsi.portal, 1);
		setenv("SDSWARM_IQN_PREFIX", c->iscsi.iqn_prefix, 1);
	} else {
		unsetenv("SDSWARM_PORTAL");
		unsetenv("SDSWARM_IQN_PREFIX");
	}
	execl("/bin/sh", "sh", "-c", o->run, (char *)NULL);
	fprintf(stderr, "sdswarmd: --run: /bin/sh: %s\n", strerror(errno));
	_exit(127);
}

/* A wait status as a shell reports it: the exit code, or 128 + signal. */
static int shell_status(int wstatus)
{
	if (WIFEXITED(wstatus))
		return WEXITSTATUS(wstatus);
	if (WIFSIGNALED(wstatus))
		return 128 + WTERMSIG(wstatus);
	return 1;
}

/*
 * Serves the control socket until a terminating signal arrives or, with
 * --run, until the command (@child > 0) exits; its shell-style status
 * goes to *@child_status.
 */
static int serve(struct ctl_server *ctl, int sfd, pid_t child,
		 int *child_status)
{
	struct epoll_event ev = {.events = EPOLLIN}, evs[4];
	struct signalfd_siginfo si;
	int epfd, n, i, ret = 0, ws;

	epfd = epoll_create1(EPOLL_CLOEXEC);
	if (epfd < 0)
		return -errno;
	ev.data.fd = sfd;
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, sfd, &ev) < 0)
		goto out_errno;
	ev.data.fd = ctl_server_fd(ctl);
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, ev.data.fd, &ev) < 0)
		goto out_errno;
	for (;;) {
		n = epoll_wait(epfd, evs, 4, -1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			goto out_errno;
		}
		for (i = 0; i < n; i++) {
			if (evs[i].data.fd != sfd) {
				ctl_server_run(ctl);
				continue;
			}
			if (read(sfd, &si, sizeof(si)) != sizeof(si))
				continue;
			if (si.ssi_signo == SIGCHLD) {
				/* SIGCHLDs merge: reap by PID, not by count */
				if (child <= 0 ||
				    waitpid(child, &ws, WNOHANG) != child)
					continue;
				*child_status = shell_status(ws);
				log_notice(
					"--run: the command exited with status %d: shutting down",
					*child_status);
				goto out;
			}
			log_notice("%s: shutting down",
				   strsignal((int)si.ssi_signo));
			goto out;
		}
	}
out_errno:
	ret = -errno;
	log_err("event loop: %s", strerror(errno));
out:
	close(epfd);
	return ret;
}

int main(int argc, char **argv)
{
	void *fe_state[NFRONTENDS] = {0};
	bool fe_running[NFRONTENDS] = {0};
	struct opts o = {0};
	struct cfg *c = NULL;
	struct store *store = NULL;
	struct lun_table *luns = NULL;
	struct fault_table *faults = NULL;
	struct ctl_server *ctl = NULL;
	struct scsi_target tgt;
	struct target target = {0};
	struct scsi_alua alua;
	unsigned int i;
	struct ctl_context ctx;
	char path[CFG_SOCKET_PATH_MAX + 1], fdesc[CFG_PATH_MAX + 128];
	const char *env;
	double ms;
	sigset_t sigs, oldmask;
	pid_t parent, child = 0;
	int ret, sfd, status = 1, child_status = 1;

	log_set_ident("sdswarmd");
	if (parse_opts(argc, argv, &o))
		return CLI_EXIT_USAGE;
	if (load_config(&o, &c))
		return CLI_EXIT_FAILURE;
	log_set_level(c->target.log_level);
	if (c->target.syslog && !o.check)
		log_open_syslog("sdswarmd");
	if (o.check) {
		ret = check_only(c);
		cfg_free(c);
		return ret ? CLI_EXIT_FAILURE : CLI_EXIT_OK;
	}

	/* signals go to the signalfd: block them before any thread exists;
	 * SIGCHLD tells that the --run command ended */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	if (o.run)
		sigaddset(&sigs, SIGCHLD);
	sigprocmask(SIG_BLOCK, &sigs, &oldmask);
	signal(SIGPIPE, SIG_IGN);
	sfd = signalfd(-1, &sigs, SFD_CLOEXEC);
	if (sfd < 0) {
		log_err("signalfd: %s", strerror(errno));
		goto out_cfg;
	}
	if (o.exit_with_parent) {
		/* SIGTERM when the parent dies, into the signalfd like any
		 * other; a parent gone before the prctl is caught by the
		 * getppid() check (we were reparented) */
		parent = getppid();
		if (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0) {
			log_err("--exit-with-parent: prctl: %s",
				strerror(errno));
			goto out_sfd;
		}
		if (getppid() != parent) {
			log_err("--exit-with-parent: the parent has already exited");
			goto out_sfd;
		}
	}

	if (make_store(c, &store))
		goto out_sfd;
	if (make_luns(c, store, &luns, &ms))
		goto out_store;
	log_notice(
		"created %u LUNs in %u group%s in %.1f ms: %.1f bytes/LUN (LUN table %zu bytes)",
		lun_count(luns), c->ngroups, c->ngroups == 1 ? "" : "s", ms,
		bytes_per_lun(luns), lun_table_bytes(luns));
	if (make_faults(c, &faults))
		goto out_luns;
	tgt = (struct scsi_target){
		.luns = luns, .faults = faults, .port_id = 1, .tpg = 1};
	if (cfg_alua(c, &alua)) {
		tgt.alua = &alua;
		for (i = 0; i < alua.ngroups; i++)
			log_notice("alua: port group %s (%u): %s",
				   alua.groups[i].name, alua.groups[i].id,
				   scsi_alua_state_name(alua.groups[i].state));
	}
	target = (struct target){
		.luns = luns,
		.faults = faults,
		.scsi = &tgt,
		.scheme = c->target.scheme,
		.name_prefix = c->target.name_prefix,
		.groups = c->groups,
		.ngroups = c->ngroups,
		.space_limit = c->store.type == CFG_STORE_MEM
				       ? c->store.mem.mem_limit
				       : 0,
	};
	if (target_init(&target)) {
		log_err("out of memory");
		goto out_faults;
	}

	/*
	 * The control socket: the one asked for (--control, [target]
	 * control) or else $SDSWARM_CONTROL or the default path, which a
	 * daemon started beside another may find taken: then, and always for
	 * a captive run (--run, whose command gets $SDSWARM_CONTROL), a
	 * private one beside it, PATH.PID, so that runs side by side never
	 * collide.
	 */
	env = getenv("SDSWARM_CONTROL");
	if (c->target.control[0]) {
		snprintf(path, sizeof(path), "%s", c->target.control);
	} else if (env && env[0]) {
		if (strlen(env) >= sizeof(path)) {
			log_err("control socket: SDSWARM_CONTROL is too long");
			goto out_faults;
		}
		snprintf(path, sizeof(path), "%s", env);
	} else if (ctl_default_path(path, sizeof(path)) < 0) {
		log_err("control socket: the default path is too long; use --control");
		goto out_faults;
	}
	ctx = (struct ctl_context){.target = &target,
				   .store = store,
				   .cfg = c,
				   .idle_timeout =
					   c->target.control_idle_timeout};
	ret = -EADDRINUSE;
	if (c->target.control[0] || !o.run)
		ret = ctl_server_create(&ctl, path, &ctx);
	if (ret == -EADDRINUSE && !c->target.control[0]) {
		size_t n = strlen(path);

		if (o.run)
			log_info("control socket: a private one for --run");
		else
			log_notice(
				"control socket %s is another daemon's: this one's is %s.%d",
				path, path, (int)getpid());
		if (snprintf(path + n, sizeof(path) - n, ".%d",
			     (int)getpid()) >= (int)(sizeof(path) - n)) {
			log_err("control socket: %s.PID is too long; use --control",
				path);
			goto out_faults;
		}
		ret = ctl_server_create(&ctl, path, &ctx);
	}
	if (ret) {
		log_err("control socket %s: %s", path, ctl_error(ret));
		goto out_faults;
	}
	if (check_fit(c, luns))
		goto out_ctl;
	if (raise_nofile(c, luns))
		goto out_frontends;
	if (start_frontends(c, &target, fe_state, fe_running))
		goto out_frontends;
	if (fe_running[0]) /* frontends[0]: iscsi */
		bound_portals(c, fe_state[0]);
	describe_frontends(c, fdesc, sizeof(fdesc));
	if (!any_frontend(c))
		log_warn(
			"no front end: the %u LUNs are reachable only through the control socket (give --fuse DIR, --iscsi or --tcmu, or enable one in the configuration)",
			lun_count(luns));
	log_notice(
		"serving %u LUNs; front ends: %s; control socket %s (pid %d)",
		lun_count(luns), fdesc, path, (int)getpid());

	/* ready: every front end serves */
	if (o.pidfile) {
		ret = write_pidfile(o.pidfile);
		if (ret) {
			log_err("pidfile %s: %s", o.pidfile, strerror(-ret));
			goto out_frontends;
		}
	}
	notify("READY=1");
	if (o.run) {
		child = run_command(&o, c, path, &oldmask);
		if (child < 0) {
			log_err("--run: fork: %s", strerror(-child));
			goto out_stopping;
		}
	}

	status = serve(ctl, sfd, child, &child_status) ? 1 : 0;
	if (child > 0 && waitpid(child, NULL, WNOHANG) == 0) {
		/* a signal stopped the daemon first: the command goes too */
		log_notice("--run: stopping the command (pid %d)", (int)child);
		kill(child, SIGTERM);
	}

out_stopping:
	notify("STOPPING=1");
out_frontends:
	stop_frontends(fe_state, fe_running);
	if (o.pidfile)
		remove_pidfile(o.pidfile);
out_ctl:
	ctl_server_destroy(ctl);
out_faults:
	target_fini(&target);
	scsi_target_fini(&tgt); /* reservation state, if any was made */
	fault_table_destroy(faults);
out_luns:
	lun_table_destroy(luns);
out_store:
	ret = store_flush(store, STORE_ALL_LUNS);
	if (ret) {
		log_err("store flush: %s", strerror(-ret));
		status = 1;
	}
	store_destroy(store);
out_sfd:
	close(sfd);
out_cfg:
	cfg_free(c);
	/* with --run, the command's status once it ran; else ours */
	if (o.run)
		return child > 0 && status == 0 ? child_status : 1;
	return status;
}
