// SPDX-License-Identifier: MIT
/*
 * sdswarmd: the target daemon. Reads the configuration, builds the store,
 * the LUN table and the fault table, opens the control socket, starts the
 * front ends, and serves until SIGTERM or SIGINT; then shuts down in
 * reverse and flushes the store. Runs in the foreground: a supervisor (or
 * a test) owns its lifetime.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "control.h"
#include "fault.h"
#include "frontend/fuse/fusefe.h"
#include "frontend/iscsi/iscsi.h"
#include "frontend/tcmu/tcmu.h"
#include "log.h"
#include "lun.h"
#include "scsi/scsi.h"
#include "store/store.h"

/*
 * The front ends. Each start() reads its own section of the configuration
 * and returns 0 when it is running, 1 when the configuration does not ask
 * for it, or -errno; stop() undoes a start() that returned 0. They start
 * in table order and the daemon stops them in reverse order.
 */
struct frontend {
	const char *name;
	int (*start)(const struct cfg *cfg, struct scsi_target *tgt,
		     void **state);
	void (*stop)(void *state);
};

static const struct frontend frontends[] = {
	{.name = "iscsi", .start = iscsi_fe_start, .stop = iscsi_fe_stop},
	{.name = "tcmu", .start = tcmu_fe_start, .stop = tcmu_fe_stop},
	{.name = "fuse", .start = fusefe_start, .stop = fusefe_stop},
	{.name = NULL},
};

#define NFRONTENDS (sizeof(frontends) / sizeof(frontends[0]))

struct opts {
	const char *config;
	const char *control;
	const char *store_dir;
	const char *mem_limit;
	const char *fuse;
	const char *pidfile;
	const char *luns;
	int verbose;
	bool check;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: sdswarmd [--config FILE] [--control PATH] [--store "
		"DIR]\n"
		"                [--mem-limit SIZE] [--luns N] [--fuse DIR]\n"
		"                [--pidfile PATH] [-v|-vv|-vvv] "
		"[--foreground]\n"
		"                [--check]\n"
		"  -c, --config FILE   the configuration (default: the "
		"built-in one,\n"
		"                      18,279 disks; see sdswarm.conf(5))\n"
		"      --control PATH  the control socket\n"
		"      --store DIR     keep data in DIR (the file store)\n"
		"      --mem-limit SIZE  cap the mem store (K, M, G, T, P)\n"
		"      --luns N        create N LUNs at start\n"
		"      --fuse DIR      mount the FUSE front end on DIR\n"
		"      --pidfile PATH  write the daemon's PID there\n"
		"  -v                  log info; -vv debug; -vvv every CDB\n"
		"      --foreground    run in the foreground (always the "
		"case)\n"
		"      --check         check the configuration, build the LUN "
		"table,\n"
		"                      print a summary and exit\n"
		"  -h, --help          this text\n");
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
		O_CHECK
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
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c;

	while ((c = getopt_long(argc, argv, "c:vh", longopts, NULL)) != -1) {
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
		case 'v':
			o->verbose++;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "sdswarmd: unexpected argument '%s'\n",
			argv[optind]);
		usage(stderr);
		return -1;
	}
	return 0;
}

/* The configuration file (or the built-in one) and the flags over it. */
static int load_config(const struct opts *o, struct cfg **out)
{
	static const char *const levels[] = {"info", "debug", "trace"};
	struct cfg_parser *p;
	char *end;
	unsigned long n;
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
	if (o->verbose)
		cfg_override(p, "target", "log_level",
			     levels[o->verbose > 3 ? 2 : o->verbose - 1]);
	if (o->luns) {
		errno = 0;
		n = strtoul(o->luns, &end, 10);
		if (o->luns[0] < '0' || o->luns[0] > '9' || *end || errno ||
		    n > LUN_MAX_LUNS) {
			fprintf(stderr,
				"command line: --luns %s: not a number "
				"from 0 to %u\n",
				o->luns, LUN_MAX_LUNS);
			cfg_parser_destroy(p);
			return -EINVAL;
		}
		cfg_override_luns(p, (uint32_t)n);
	}
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
	struct store_file_params fp = {
		.dir = c->store.dir, .max_open_files = c->store.max_open_files};
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
	char sdesc[CFG_PATH_MAX + 64];
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
	ret = make_faults(c, &ft);
	if (ret)
		goto out_luns;
	describe_store(c, sdesc, sizeof(sdesc));
	paths[0] = '\0';
	if (c->iscsi.enabled && (c->iscsi.nportals > 1 || c->nport_groups))
		snprintf(paths, sizeof(paths),
			 ", %u iSCSI portal%s, %u ALUA port group%s",
			 c->iscsi.nportals, c->iscsi.nportals == 1 ? "" : "s",
			 c->nport_groups, c->nport_groups == 1 ? "" : "s");
	printf("%s: ok: %u LUNs, %u group%s, max_luns %u, store %s, "
	       "%u fault rule%s%s, %.1f bytes/LUN, built in %.1f ms\n",
	       c->source, lun_count(t), c->ngroups, c->ngroups == 1 ? "" : "s",
	       lun_max(t), sdesc, c->nfaults, c->nfaults == 1 ? "" : "s",
	       paths, bytes_per_lun(t), ms);
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
		return "another sdswarmd answers there (stop it, or use "
		       "--control)";
	case -EEXIST:
		return "exists and is not a socket";
	case -ENAMETOOLONG:
		return "path too long for a Unix socket";
	case -EPERM:
		return "its directory is writable by other users";
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
		log_err("tcmu: %u backstores need %llu open files, but "
			"RLIMIT_NOFILE is %llu and cannot be raised (ulimit "
			"-n, LimitNOFILE=, or run with CAP_SYS_RESOURCE)",
			lun_count(t), must, (unsigned long long)want.rlim_cur);
		return -EMFILE;
	}
	if (want.rlim_cur != RLIM_INFINITY && want.rlim_cur < need)
		log_warn("open files: limit %llu is below the %llu this "
			 "configuration may hold (TCMU LUNs added later, iSCSI "
			 "sessions, file store): past it they are refused",
			 (unsigned long long)want.rlim_cur, need);
	return 0;
}

static int start_frontends(const struct cfg *c, struct scsi_target *tgt,
			   void **states, bool *running)
{
	unsigned int i;
	int ret;

	for (i = 0; i < NFRONTENDS && frontends[i].name; i++) {
		ret = frontends[i].start(c, tgt, &states[i]);
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

/* Serves the control socket until a terminating signal arrives. */
static int serve(struct ctl_server *ctl, int sfd)
{
	struct epoll_event ev = {.events = EPOLLIN}, evs[4];
	struct signalfd_siginfo si;
	int epfd, n, i, ret = 0;

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
	struct scsi_alua alua;
	unsigned int i;
	struct ctl_context ctx;
	char path[CFG_SOCKET_PATH_MAX + 1];
	double ms;
	sigset_t sigs;
	int ret, sfd, status = 1;

	log_set_ident("sdswarmd");
	if (parse_opts(argc, argv, &o))
		return 2;
	if (load_config(&o, &c))
		return 1;
	log_set_level(c->target.log_level);
	if (o.check) {
		ret = check_only(c);
		cfg_free(c);
		return ret ? 1 : 0;
	}

	/* signals go to the signalfd: block them before any thread exists */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);
	sfd = signalfd(-1, &sigs, SFD_CLOEXEC);
	if (sfd < 0) {
		log_err("signalfd: %s", strerror(errno));
		goto out_cfg;
	}

	if (make_store(c, &store))
		goto out_sfd;
	if (make_luns(c, store, &luns, &ms))
		goto out_store;
	log_notice("created %u LUNs in %u group%s in %.1f ms: %.1f bytes/LUN "
		   "(LUN table %zu bytes)",
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

	if (c->target.control[0]) {
		snprintf(path, sizeof(path), "%s", c->target.control);
	} else if (ctl_default_path(path, sizeof(path)) < 0) {
		log_err("control socket: the default path is too long; use "
			"--control");
		goto out_faults;
	}
	ctx = (struct ctl_context){.luns = luns,
				   .faults = faults,
				   .store = store,
				   .cfg = c,
				   .tgt = &tgt};
	ret = ctl_server_create(&ctl, path, &ctx);
	if (ret) {
		log_err("control socket %s: %s", path, ctl_error(ret));
		goto out_faults;
	}
	if (o.pidfile) {
		ret = write_pidfile(o.pidfile);
		if (ret) {
			log_err("pidfile %s: %s", o.pidfile, strerror(-ret));
			goto out_ctl;
		}
	}
	if (raise_nofile(c, luns))
		goto out_frontends;
	if (start_frontends(c, &tgt, fe_state, fe_running))
		goto out_frontends;
	log_notice("serving %u LUNs; control socket %s (pid %d)",
		   lun_count(luns), path, (int)getpid());

	status = serve(ctl, sfd) ? 1 : 0;

out_frontends:
	stop_frontends(fe_state, fe_running);
	if (o.pidfile)
		remove_pidfile(o.pidfile);
out_ctl:
	ctl_server_destroy(ctl);
out_faults:
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
	return status;
}
