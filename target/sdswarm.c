// SPDX-License-Identifier: MIT
/*
 * sdswarm: the control client. Turns a command line into one JSON request
 * on the daemon's control socket, and the reply into text (or, with
 * --json, prints the reply as it came). The whole command line is
 * checked before the daemon is reached. Errors go to stderr: exit 2 for a
 * command line that is not understood, 1 for anything that fails after.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "array.h"
#include "cli.h"
#include "config.h"
#include "control.h"
#include "parse.h"

/* Entries per `names` request when paging for text output. */
#define NAMES_PAGE (4 * CTL_NAMES_BATCH)

struct client {
	const char *path;
	int fd;
	pid_t pid; /* the daemon's, as the socket says; 0 if it does not */
	bool json;
	char *line; /* the last reply, then what was read past it */
	size_t len, cap;
	size_t used; /* bytes of the last reply and its newline */
	size_t have; /* bytes read past the last reply */
};

static void die(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));

static void die(const char *fmt, ...)
{
	va_list ap;

	fputs("sdswarm: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(CLI_EXIT_FAILURE);
}

/* A command line that is not understood: exit 2, before any connection. */
static void die_usage(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));

static void die_usage(const char *fmt, ...)
{
	va_list ap;

	fputs("sdswarm: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fputs("Try 'sdswarm --help'.\n", stderr);
	exit(CLI_EXIT_USAGE);
}

/* An argument a command does not take, with "did you mean" for a word
 * close to one of @words (its options or ops; NULL-terminated). */
static void unexpected(const char *cmd, const char *arg,
		       const char *const *words, const char *synopsis)
	__attribute__((noreturn));

static void unexpected(const char *cmd, const char *arg,
		       const char *const *words, const char *synopsis)
{
	size_t n = 0;
	const char *best;

	while (words && words[n])
		n++;
	best = n ? cli_suggest(arg, words, n) : NULL;
	if (best && strcmp(best, arg) == 0)
		die_usage("%s: %s needs a value", cmd, arg);
	if (best)
		die_usage("%s: unexpected '%s' (did you mean %s?)", cmd, arg,
			  best);
	die_usage("%s: unexpected '%s' (%s)", cmd, arg, synopsis);
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: sdswarm [--control PATH] [--json] COMMAND [ARGS]\n"
		"  status [--lun N]              LUNs, memory, store, groups\n"
		"  lun add [--group NAME] [LUN]  add a LUN (lowest free number)\n"
		"  lun remove LUN\n"
		"  lun resize LUN SIZE           SIZE with K, M, G, T or P\n"
		"  lun offline LUN | lun online LUN\n"
		"  lun list                      LUNs as ranges: group, state, size, stored\n"
		"  fault set RULE...             e.g. medium-read luns=0-3 lba=100-199\n"
		"  fault clear ID|all\n"
		"  fault list\n"
		"  alua list                     ALUA port groups and states\n"
		"  alua set GROUP STATE          STATE: active/optimized (ao), active/non-optimized\n"
		"                                (an), standby, unavailable\n"
		"  stats [--luns A-B] [--count-luns A-B|off] [--watch SECONDS [--count N]]\n"
		"                                SCSI commands by name, FUSE requests, latency,\n"
		"                                per-LUN counters, rates per interval\n"
		"  metrics                       the counters as OpenMetrics text\n"
		"  sessions                      iSCSI initiators, targets, digests, commands in\n"
		"                                flight; the FUSE mount's requests in flight\n"
		"  save-config FILE|-            the running LUN table, groups and faults as\n"
		"                                a configuration that reproduces them\n"
		"  names [--scheme S] [--first N] [--count N]\n"
		"                                predicted kernel names and dev_ts\n"
		"--control PATH (default $SDSWARM_CONTROL, else sdswarmd's default) and\n"
		"--json (print the daemon's reply) may come before or after the command.\n"
		"--version prints the version. Exit status: 0 done, 1 failed, 2 usage\n"
		"error. See sdswarm(8).\n");
}

/* The pid of the process at the other end of @fd; 0 if unknown (another
 * PID namespace). */
static pid_t peer_pid(int fd)
{
	struct ucred uc;
	socklen_t len = sizeof(uc);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &len) < 0)
		return 0;
	return uc.pid;
}

/* Connects on the first request; @pending (that request) is freed if the
 * connection fails, so the exit leaves nothing behind. */
static void connect_daemon(struct client *cl, json_t *pending)
{
	static char def[CFG_SOCKET_PATH_MAX + 1];
	int fd;

	if (!cl->path) {
		const char *env = getenv("SDSWARM_CONTROL");

		if (env && env[0])
			cl->path = env;
	}
	if (!cl->path) {
		if (ctl_default_path(def, sizeof(def)) < 0) {
			json_decref(pending);
			die("the default control socket path is too long; use --control");
		}
		cl->path = def;
	}
	fd = ctl_connect(cl->path);
	if (fd < 0)
		json_decref(pending);
	if (fd == -ENOENT)
		die("cannot reach sdswarmd at %s: no control socket there (is sdswarmd running? see --control)",
		    cl->path);
	if (fd == -ECONNREFUSED)
		die("cannot reach sdswarmd at %s: nothing is listening (is sdswarmd running?)",
		    cl->path);
	if (fd == -EPERM)
		die("refusing %s: the process behind it is neither root nor this user, so its replies cannot be trusted (was the socket's directory made by someone else?)",
		    cl->path);
	if (fd < 0)
		die("cannot reach sdswarmd at %s: %s", cl->path, strerror(-fd));
	cl->fd = fd;
	cl->pid = peer_pid(fd);
}

/* Closes the connection; the next call() makes a new one. */
static void hang_up(struct client *cl)
{
	close(cl->fd);
	cl->fd = -1;
	cl->used = 0;
	cl->have = 0;
}

/* One reply line into cl->line (NUL-terminated, without the newline). */
static void read_reply(struct client *cl)
{
	char *nl, *nb;
	ssize_t n;

	/* drop the previous reply, keep what followed it */
	if (cl->used) {
		memmove(cl->line, cl->line + cl->used, cl->have);
		cl->used = 0;
	}
	for (;;) {
		nl = cl->have ? memchr(cl->line, '\n', cl->have) : NULL;
		if (nl) {
			*nl = '\0';
			cl->len = (size_t)(nl - cl->line);
			cl->used = cl->len + 1;
			cl->have -= cl->used;
			return;
		}
		if (cl->have + 65536 > cl->cap) {
			cl->cap = cl->cap ? cl->cap * 2 : 1 << 17;
			nb = realloc(cl->line, cl->cap);
			if (!nb)
				die("out of memory");
			cl->line = nb;
		}
		n = read(cl->fd, cl->line + cl->have, cl->cap - cl->have - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			die("reading from %s: %s", cl->path, strerror(errno));
		if (n == 0)
			die("sdswarmd at %s closed the connection without a reply",
			    cl->path);
		cl->have += (size_t)n;
	}
}

static void send_request(struct client *cl, json_t *req)
{
	char *text = json_dumps(req, JSON_COMPACT);
	size_t len, off = 0;
	ssize_t n;

	json_decref(req);
	if (!text)
		die("out of memory");
	len = strlen(text);
	text[len++] = '\n'; /* json_dumps leaves room: the NUL becomes it */
	while (off < len) {
		n = send(cl->fd, text + off, len - off, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		/*
		 * The daemon closed first: a full daemon answers "too many
		 * control clients" before it reads a byte. Its line is still
		 * there to read; read_reply() says so or that there is none.
		 */
		if (n < 0 && (errno == EPIPE || errno == ECONNRESET))
			break;
		if (n < 0)
			die("writing to %s: %s", cl->path, strerror(errno));
		off += (size_t)n;
	}
	free(text);
}

/*
 * Sends @req and returns the parsed reply, exiting with the daemon's
 * message if it says ok:false. With @raw (--json), prints the line as it
 * came and returns NULL.
 */
static json_t *call(struct client *cl, json_t *req, bool raw)
{
	static const char ok[] = "{\"ok\":true";
	json_error_t jerr;
	json_t *reply, *err;

	/* the first request connects: the arguments are all checked */
	if (cl->fd < 0)
		connect_daemon(cl, req);
	send_request(cl, req);
	read_reply(cl);
	if (raw && strncmp(cl->line, ok, sizeof(ok) - 1) == 0) {
		fwrite(cl->line, 1, cl->len, stdout);
		fputc('\n', stdout);
		return NULL;
	}
	reply = json_loadb(cl->line, cl->len, 0, &jerr);
	if (!reply || !json_is_object(reply))
		die("sdswarmd sent a reply that is not a JSON object: %s",
		    jerr.text);
	if (!json_is_true(json_object_get(reply, "ok"))) {
		if (raw) {
			fwrite(cl->line, 1, cl->len, stdout);
			fputc('\n', stdout);
		}
		err = json_object_get(reply, "error");
		die("%s", json_is_string(err) ? json_string_value(err)
					      : "the daemon said no");
	}
	if (raw) {
		fwrite(cl->line, 1, cl->len, stdout);
		fputc('\n', stdout);
		json_decref(reply);
		return NULL;
	}
	return reply;
}

static uint64_t num(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_integer(v) ? (uint64_t)json_integer_value(v) : 0;
}

static const char *str(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_string(v) ? json_string_value(v) : "?";
}

static const char *human(uint64_t bytes, char *buf, size_t len)
{
	static const char *const units[] = {"B",   "KiB", "MiB", "GiB",
					    "TiB", "PiB", "EiB"};
	double v = (double)bytes;
	unsigned int u = 0;

	while (v >= 1024 && u < 6) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, len, "%" PRIu64 " B", bytes);
	else
		snprintf(buf, len, "%.1f %s", v, units[u]);
	return buf;
}

static uint64_t parse_num(const char *what, const char *s, uint64_t max)
{
	uint64_t v;

	if (!s || *s < '0' || *s > '9')
		die_usage("%s '%s': not a number", what, s ? s : "");
	if (parse_u64(s, 10, max, &v))
		die_usage("%s '%s': not a number from 0 to %" PRIu64, what, s,
			  max);
	return v;
}

/* ---- commands ----------------------------------------------------------- */

static int do_status(struct client *cl, int argc, char **argv)
{
	json_t *req = json_pack("{s:s}", "cmd", "status");
	json_t *r, *g, *st, *lun;
	char a[32], b[32];
	size_t i;
	int k;

	for (k = 0; k < argc; k++) {
		if (strcmp(argv[k], "--lun") == 0 && k + 1 < argc)
			json_object_set_new(
				req, "lun",
				json_integer((json_int_t)parse_num(
					"--lun", argv[++k], LUN_MAX_LUNS - 1)));
		else
			unexpected("status", argv[k],
				   (const char *const[]){"--lun", NULL},
				   "status [--lun N]");
	}
	r = call(cl, req, cl->json);
	if (!r)
		return 0;
	printf("luns      %" PRIu64 " of %" PRIu64 "\n", num(r, "luns"),
	       num(r, "max_luns"));
	printf("rss       %s (%" PRIu64 " bytes)\n",
	       human(num(r, "rss_bytes"), a, sizeof(a)), num(r, "rss_bytes"));
	printf("uptime    %" PRIu64 " s\n", num(r, "uptime_s"));
	st = json_object_get(r, "states");
	printf("states    %" PRIu64 " online, %" PRIu64 " offline, %" PRIu64
	       " not ready, %" PRIu64 " stopped\n",
	       num(st, "online"), num(st, "offline"), num(st, "not_ready"),
	       num(st, "stopped"));
	st = json_object_get(r, "store");
	printf("store     %s: %s data, %s metadata, %" PRIu64
	       " LUNs with data\n",
	       str(st, "kind"), human(num(st, "data_bytes"), a, sizeof(a)),
	       human(num(st, "meta_bytes"), b, sizeof(b)), num(st, "luns"));
	printf("faults    %" PRIu64 " rules, %" PRIu64 " fired\n",
	       num(r, "faults"), num(r, "faults_fired"));
	printf("groups\n");
	json_array_foreach(json_object_get(r, "groups"), i, g) {
		uint64_t first = num(g, "first"), count = num(g, "count");
		char range[48];

		if (count)
			snprintf(range, sizeof(range),
				 "LUNs %" PRIu64 "-%" PRIu64, first,
				 first + count - 1);
		else
			snprintf(range, sizeof(range), "from LUN %" PRIu64,
				 first);
		cfg_format_size(num(g, "size"), a, sizeof(a));
		printf("  %-12s %s, %" PRIu64 " present, %s, %" PRIu64
		       "-byte blocks, %" PRIu64 " partitions (%s)%s\n",
		       str(g, "name"), range, num(g, "present"), a,
		       num(g, "block_size"), num(g, "partitions"),
		       str(g, "ptable"),
		       json_is_true(json_object_get(g, "thin")) ? ", thin"
								: "");
	}
	lun = json_object_get(r, "lun");
	if (lun)
		printf("lun %" PRIu64 ": %s, group %s, %" PRIu64
		       " bytes (%" PRIu64 " blocks of %" PRIu64
		       "), %s stored, serial %s, wwn %s\n",
		       num(lun, "lun"), str(lun, "state"), str(lun, "group"),
		       num(lun, "size"), num(lun, "blocks"),
		       num(lun, "block_size"),
		       human(num(lun, "data_bytes"), a, sizeof(a)),
		       str(lun, "serial"), str(lun, "wwn"));
	json_decref(r);
	return 0;
}

/* lun list: one line per range of LUNs alike (group, state, size). */
static int lun_list(struct client *cl, int argc, char **argv)
{
	json_t *r, *g;
	char size[32], stored[32], luns[32];
	size_t i;

	if (argc)
		unexpected("lun list", argv[0], NULL,
			   "lun list takes no arguments");
	r = call(cl, json_pack("{s:s,s:s}", "cmd", "lun", "op", "list"),
		 cl->json);
	if (!r)
		return 0;
	printf("%-15s %-8s %-12s %-10s %-10s %-12s %s\n", "LUNS", "COUNT",
	       "GROUP", "STATE", "SIZE", "STORED", "FAULTS");
	json_array_foreach(json_object_get(r, "ranges"), i, g) {
		if (num(g, "count") == 1)
			snprintf(luns, sizeof(luns), "%" PRIu64,
				 num(g, "first"));
		else
			snprintf(luns, sizeof(luns), "%" PRIu64 "-%" PRIu64,
				 num(g, "first"), num(g, "last"));
		cfg_format_size(num(g, "size"), size, sizeof(size));
		printf("%-15s %-8" PRIu64 " %-12s %-10s %-10s %-12s %" PRIu64
		       "\n",
		       luns, num(g, "count"), str(g, "group"), str(g, "state"),
		       size,
		       human(num(g, "data_bytes"), stored, sizeof(stored)),
		       num(g, "faults"));
	}
	printf("%" PRIu64 " LUNs in %zu range%s\n", num(r, "luns"),
	       json_array_size(json_object_get(r, "ranges")),
	       json_array_size(json_object_get(r, "ranges")) == 1 ? "" : "s");
	json_decref(r);
	return 0;
}

static int do_lun(struct client *cl, int argc, char **argv)
{
	json_t *req, *r;
	static const char *const ops[] = {
		"add", "remove", "resize", "offline", "online", "list", NULL};
	const char *op, *group = NULL, *lun = NULL, *size = NULL;
	int k;

	if (argc < 1)
		die_usage(
			"lun: which op? (add, remove, resize, offline, online)");
	op = argv[0];
	for (k = 0; ops[k] && strcmp(op, ops[k]); k++)
		;
	if (!ops[k])
		unexpected("lun", op, ops,
			   "add, remove, resize, offline, online, list");
	if (strcmp(op, "list") == 0)
		return lun_list(cl, argc - 1, argv + 1);
	for (k = 1; k < argc; k++) {
		if (strcmp(argv[k], "--group") == 0 && k + 1 < argc)
			group = argv[++k];
		else if (strncmp(argv[k], "--", 2) == 0)
			unexpected(op, argv[k],
				   (const char *const[]){"--group", NULL},
				   "lun add [--group NAME] [LUN]");
		else if (!lun)
			lun = argv[k];
		else if (!size && strcmp(op, "resize") == 0)
			size = argv[k];
		else
			die_usage("lun %s: unexpected '%s'", op, argv[k]);
	}
	req = json_pack("{s:s,s:s}", "cmd", "lun", "op", op);
	if (strcmp(op, "add") == 0) {
		if (group)
			json_object_set_new(req, "group", json_string(group));
	} else if (strcmp(op, "remove") == 0 || strcmp(op, "offline") == 0 ||
		   strcmp(op, "online") == 0 || strcmp(op, "resize") == 0) {
		if (group)
			die_usage("lun %s: --group applies only to lun add",
				  op);
		if (!lun)
			die_usage("lun %s: which LUN?", op);
		if (strcmp(op, "resize") == 0) {
			if (!size)
				die_usage(
					"lun resize: to what size? (lun resize LUN SIZE)");
			json_object_set_new(req, "size", json_string(size));
		}
	}
	if (lun)
		json_object_set_new(req, "lun",
				    json_integer((json_int_t)parse_num(
					    "LUN", lun, LUN_MAX_LUNS - 1)));
	r = call(cl, req, cl->json);
	if (!r)
		return 0;
	if (strcmp(op, "add") == 0)
		printf("added LUN %" PRIu64 " (group %s)\n", num(r, "lun"),
		       str(r, "group"));
	else if (strcmp(op, "remove") == 0)
		printf("removed LUN %" PRIu64 "\n", num(r, "lun"));
	else if (strcmp(op, "resize") == 0)
		printf("LUN %" PRIu64 " resized to %" PRIu64 " bytes\n",
		       num(r, "lun"), num(r, "size"));
	else
		printf("LUN %" PRIu64 " %s\n", num(r, "lun"), str(r, "state"));
	json_decref(r);
	return 0;
}

static int do_fault(struct client *cl, int argc, char **argv)
{
	char rule[CFG_LINE_MAX + 1];
	size_t n = 0, i;
	json_t *req, *r, *f;
	int k;

	if (argc < 1)
		die_usage("fault: which op? (set, clear, list)");
	if (strcmp(argv[0], "set") && strcmp(argv[0], "clear") &&
	    strcmp(argv[0], "list"))
		unexpected("fault", argv[0],
			   (const char *const[]){"set", "clear", "list", NULL},
			   "set, clear, list");
	req = json_pack("{s:s,s:s}", "cmd", "fault", "op", argv[0]);
	if (strcmp(argv[0], "set") == 0) {
		if (argc < 2)
			die_usage(
				"fault set: which rule? (e.g. fault set medium-read luns=0-3 lba=100-199)");
		rule[0] = '\0';
		for (k = 1; k < argc; k++) {
			size_t l = strlen(argv[k]);

			if (n + l + 2 > sizeof(rule))
				die_usage("fault set: the rule is too long");
			if (n)
				rule[n++] = ' ';
			memcpy(rule + n, argv[k], l + 1);
			n += l;
		}
		json_object_set_new(req, "rule", json_string(rule));
	} else if (strcmp(argv[0], "clear") == 0) {
		if (argc != 2)
			die_usage("fault clear: which rule? (an id, or all)");
		if (strcmp(argv[1], "all") == 0)
			json_object_set_new(req, "id", json_string("all"));
		else
			json_object_set_new(
				req, "id",
				json_integer((json_int_t)parse_num(
					"id", argv[1], UINT32_MAX)));
	} else if (argc != 1) {
		die_usage("fault list: unexpected '%s'", argv[1]);
	}
	r = call(cl, req, cl->json);
	if (!r)
		return 0;
	if (strcmp(argv[0], "set") == 0) {
		printf("fault %" PRIu64 ": %s\n", num(r, "id"), str(r, "rule"));
	} else if (strcmp(argv[0], "clear") == 0) {
		printf("cleared %" PRIu64 " fault rule%s\n", num(r, "cleared"),
		       num(r, "cleared") == 1 ? "" : "s");
	} else {
		printf("%-6s %-10s %-10s %s\n", "ID", "HITS", "LEFT", "RULE");
		json_array_foreach(json_object_get(r, "faults"), i, f) {
			char left[24];

			if (num(f, "count_left"))
				snprintf(left, sizeof(left), "%" PRIu64,
					 num(f, "count_left"));
			else
				strcpy(left, "forever");
			printf("%-6" PRIu64 " %-10" PRIu64 " %-10s %s\n",
			       num(f, "id"), num(f, "hits"), left,
			       str(f, "rule"));
		}
		printf("%" PRIu64 " faults fired in all\n", num(r, "fired"));
	}
	json_decref(r);
	return 0;
}

/* One port group line: name, id, state, ports. */
static void print_group(json_t *g)
{
	json_t *p;
	size_t i;

	printf("%-16s %-6" PRIu64 " %-22s", str(g, "name"), num(g, "id"),
	       str(g, "state"));
	json_array_foreach(json_object_get(g, "ports"), i, p)
		printf("%s%" JSON_INTEGER_FORMAT, i ? "," : "",
		       json_integer_value(p));
	putchar('\n');
}

static int do_alua(struct client *cl, int argc, char **argv)
{
	json_t *req, *r, *g;
	size_t i;

	if (argc < 1)
		die("alua: which op? (list, set)");
	req = json_pack("{s:s,s:s}", "cmd", "alua", "op", argv[0]);
	if (strcmp(argv[0], "set") == 0) {
		if (argc != 3)
			die("alua set: GROUP STATE (e.g. alua set b standby)");
		json_object_set_new(req, "group", json_string(argv[1]));
		json_object_set_new(req, "state", json_string(argv[2]));
	} else if (strcmp(argv[0], "list") == 0) {
		if (argc != 1)
			die("alua list: unexpected '%s'", argv[1]);
	} else {
		die("alua: unknown op '%s' (list, set)", argv[0]);
	}
	r = call(cl, req, cl->json);
	if (!r)
		return 0;
	printf("%-16s %-6s %-22s%s\n", "GROUP", "ID", "STATE", "PORTS");
	if (strcmp(argv[0], "set") == 0) {
		print_group(json_object_get(r, "group"));
		if (!json_is_true(json_object_get(r, "changed")))
			printf("(unchanged: no unit attention)\n");
	} else {
		json_array_foreach(json_object_get(r, "groups"), i, g)
			print_group(g);
	}
	json_decref(r);
	return 0;
}

/* A latency for people: "850 ns", "12.3 us", "4.10 ms", "1.20 s". */
static const char *fmt_ns(uint64_t ns, char *buf, size_t len)
{
	if (ns < 1000)
		snprintf(buf, len, "%" PRIu64 " ns", ns);
	else if (ns < 1000000)
		snprintf(buf, len, "%.1f us", (double)ns / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, len, "%.2f ms", (double)ns / 1e6);
	else
		snprintf(buf, len, "%.2f s", (double)ns / 1e9);
	return buf;
}

static void print_lat(json_t *lat, const char *what)
{
	char a[24], b[24], c[24];

	printf("         latency p50 %s, p99 %s, p99.9 %s (%s)\n",
	       fmt_ns(num(lat, "p50"), a, sizeof(a)),
	       fmt_ns(num(lat, "p99"), b, sizeof(b)),
	       fmt_ns(num(lat, "p999"), c, sizeof(c)), what);
}

/* "A-B" or "A": checked here, so a typo is a usage error (exit 2). */
static const char *check_luns(const char *opt, const char *v, bool off_ok)
{
	const char *p = v;

	if (off_ok && strcmp(v, "off") == 0)
		return v;
	if (*p < '0' || *p > '9')
		goto bad;
	p += strspn(p, "0123456789");
	if (*p == '-') {
		p++;
		if (*p < '0' || *p > '9')
			goto bad;
		p += strspn(p, "0123456789");
	}
	if (*p || strlen(v) > 24)
		goto bad;
	return v;
bad:
	die_usage("%s '%s': not a LUN or a range A-B%s", opt, v,
		  off_ok ? " (or off)" : "");
}

static json_t *stats_req(const char *luns, const char *count_luns)
{
	json_t *req = json_pack("{s:s}", "cmd", "stats");

	if (luns)
		json_object_set_new(req, "luns", json_string(luns));
	if (count_luns)
		json_object_set_new(req, "count_luns", json_string(count_luns));
	return req;
}

static void print_stats(json_t *r)
{
	json_t *o, *fuse = json_object_get(r, "fuse"), *lc;
	char a[32], b[32];
	size_t i;

	human(num(r, "bytes"), a, sizeof(a));
	printf("scsi     %" PRIu64 " commands, %" PRIu64
	       " errors, %s moved, from %" PRIu64
	       " front-end threads (iSCSI, TCMU)\n",
	       num(r, "commands"), num(r, "errors"), a, num(r, "threads"));
	print_lat(
		json_object_get(r, "latency_ns"),
		"the SCSI emulation of a command, without transport time or injected delays");
	printf("fuse     %" PRIu64 " reads (%s), %" PRIu64
	       " writes (%s), %" PRIu64 " requests in all, %" PRIu64
	       " errors%s\n",
	       num(fuse, "reads"), human(num(fuse, "read_bytes"), a, sizeof(a)),
	       num(fuse, "writes"),
	       human(num(fuse, "write_bytes"), b, sizeof(b)),
	       num(fuse, "requests"), num(fuse, "errors"),
	       num(fuse, "running") ? "" : " (no FUSE mount now)");
	print_lat(
		json_object_get(fuse, "latency_ns"),
		"a read, write, fallocate or fsync from its handler to its reply, fault delays included");
	printf("faults   %" PRIu64 " fired\n", num(r, "faults_fired"));
	lc = json_object_get(r, "lun_counters");
	if (json_is_object(lc))
		printf("per-LUN  counting LUNs %" PRIu64 "-%" PRIu64 "\n",
		       num(lc, "first"), num(lc, "last"));
	if (json_array_size(json_object_get(r, "ops")))
		printf("%-28s %-12s %-16s %s\n", "COMMAND", "COUNT", "BYTES",
		       "ERRORS");
	json_array_foreach(json_object_get(r, "ops"), i, o) {
		const char *name = str(o, "name");

		/* the hex only for an opcode that has no name */
		printf("%-28s %-12" PRIu64 " %-16" PRIu64 " %" PRIu64 "\n",
		       strcmp(name, "unsupported") ? name : str(o, "opcode"),
		       num(o, "count"), num(o, "bytes"), num(o, "errors"));
	}
	if (num(fuse, "requests")) {
		printf("%-28s %-12s %-16s %s\n", "FUSE REQUEST", "COUNT",
		       "BYTES", "ERRORS");
		json_array_foreach(json_object_get(fuse, "ops"), i, o)
			if (num(o, "count"))
				printf("%-28s %-12" PRIu64 " %-16" PRIu64
				       " %" PRIu64 "\n",
				       str(o, "op"), num(o, "count"),
				       num(o, "bytes"), num(o, "errors"));
	}
	if (json_is_array(json_object_get(r, "luns"))) {
		printf("%-8s %-10s %-10s %-14s %-14s %s\n", "LUN", "READS",
		       "WRITES", "READ BYTES", "WRITE BYTES", "ERRORS");
		json_array_foreach(json_object_get(r, "luns"), i, o)
			printf("%-8" PRIu64 " %-10" PRIu64 " %-10" PRIu64
			       " %-14" PRIu64 " %-14" PRIu64 " %" PRIu64 "\n",
			       num(o, "lun"), num(o, "reads"), num(o, "writes"),
			       num(o, "read_bytes"), num(o, "write_bytes"),
			       num(o, "errors"));
	}
}

static double rate(json_t *now, json_t *before, const char *key, double s)
{
	uint64_t a = num(now, key), b = num(before, key);

	return a >= b && s > 0 ? (double)(a - b) / s : 0.0;
}

/* One --watch line: what happened since @prev, per second. */
static void watch_line(json_t *r, json_t *prev, unsigned long n)
{
	json_t *f = json_object_get(r, "fuse"),
	       *pf = json_object_get(prev, "fuse");
	double s = (double)(num(r, "now_ns") - num(prev, "now_ns")) / 1e9;

	if (n % 20 == 0)
		printf("%8s %10s %10s %8s %10s %10s %10s %10s %8s\n", "SECONDS",
		       "CMDS/S", "SCSI MB/S", "ERR/S", "FUSE R/S", "FUSE W/S",
		       "FUSE MB/S", "F.ERR/S", "FAULTS/S");
	printf("%8.2f %10.1f %10.2f %8.1f %10.1f %10.1f %10.2f %10.1f %8.1f\n",
	       s, rate(r, prev, "commands", s), rate(r, prev, "bytes", s) / 1e6,
	       rate(r, prev, "errors", s), rate(f, pf, "reads", s),
	       rate(f, pf, "writes", s), rate(f, pf, "bytes", s) / 1e6,
	       rate(f, pf, "errors", s), rate(r, prev, "faults_fired", s));
	fflush(stdout);
}

static void sleep_s(double s)
{
	struct timespec ts = {.tv_sec = (time_t)s,
			      .tv_nsec = (long)((s - (double)(time_t)s) * 1e9)};

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static int do_stats(struct client *cl, int argc, char **argv)
{
	static const char *const opts[] = {"--luns", "--count-luns", "--watch",
					   "--count", NULL};
	const char *luns = NULL, *count_luns = NULL;
	double every = 0;
	uint64_t count = 0, k;
	bool have_count = false;
	json_t *r, *prev;
	pid_t pid;
	char *end;
	int i;

	for (i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--luns") == 0 && i + 1 < argc) {
			luns = check_luns("--luns", argv[++i], false);
		} else if (strcmp(argv[i], "--count-luns") == 0 &&
			   i + 1 < argc) {
			count_luns =
				check_luns("--count-luns", argv[++i], true);
		} else if (strcmp(argv[i], "--watch") == 0 && i + 1 < argc) {
			errno = 0;
			every = strtod(argv[++i], &end);
			if (*end || errno || !(every >= 0.01) ||
			    !(every <= 86400))
				die_usage(
					"--watch '%s': not a number of seconds from 0.01 to 86400",
					argv[i]);
		} else if (strcmp(argv[i], "--count") == 0 && i + 1 < argc) {
			count = parse_num("--count", argv[++i], UINT32_MAX);
			have_count = true;
			if (!count)
				die_usage("--count 0: at least one interval");
		} else {
			unexpected(
				"stats", argv[i], opts,
				"stats [--luns A-B] [--count-luns A-B|off] [--watch SECONDS [--count N]]");
		}
	}
	if (have_count && !every)
		die_usage("stats: --count needs --watch SECONDS");
	if (every && luns)
		die_usage("stats: --luns and --watch do not go together");
	if (!every) {
		r = call(cl, stats_req(luns, count_luns), cl->json);
		if (!r)
			return 0;
		print_stats(r);
		json_decref(r);
		return 0;
	}
	/*
	 * --watch: the first sample is the baseline, each line an interval.
	 * Each sample has a connection of its own: a client silent for the
	 * whole interval would be closed by the daemon's control_idle_timeout
	 * (30 s by default, 1 s at least), and the interval may be a day. The
	 * daemon keeps that limit for clients that are truly idle, and the
	 * watch holds no client slot while it sleeps. The daemon's pid ties
	 * the samples together: counters that began again mean nothing.
	 */
	prev = call(cl, stats_req(NULL, count_luns), false);
	pid = cl->pid;
	hang_up(cl);
	for (k = 0; !have_count || k < count; k++) {
		sleep_s(every);
		connect_daemon(cl, NULL);
		if (cl->pid != pid) {
			json_decref(prev);
			die("sdswarmd at %s restarted during --watch (pid %ld, now %ld): its counters began again",
			    cl->path, (long)pid, (long)cl->pid);
		}
		r = call(cl, stats_req(NULL, NULL), cl->json);
		hang_up(cl);
		if (cl->json) {
			fflush(stdout);
			continue;
		}
		watch_line(r, prev, (unsigned long)k);
		json_decref(prev);
		prev = r;
	}
	json_decref(prev);
	return 0;
}

/* The counters as OpenMetrics text, printed as the daemon made it. */
static int do_metrics(struct client *cl, int argc, char **argv)
{
	json_t *r, *text;

	if (argc)
		unexpected("metrics", argv[0], NULL,
			   "metrics takes no arguments");
	r = call(cl, json_pack("{s:s}", "cmd", "metrics"), cl->json);
	if (!r)
		return 0;
	text = json_object_get(r, "text");
	if (!json_is_string(text))
		die("sdswarmd sent metrics without their text");
	fwrite(json_string_value(text), 1, json_string_length(text), stdout);
	json_decref(r);
	if (fflush(stdout) || ferror(stdout))
		die("writing the metrics: %s", strerror(errno));
	return 0;
}

static json_t *names_req(const char *scheme, uint64_t first, uint64_t count,
			 bool have_count)
{
	json_t *req = json_pack("{s:s,s:s,s:I}", "cmd", "names", "order", "lun",
				"first", (json_int_t)first);

	if (scheme)
		json_object_set_new(req, "scheme", json_string(scheme));
	if (have_count)
		json_object_set_new(req, "count",
				    json_integer((json_int_t)count));
	return req;
}

static int do_names(struct client *cl, int argc, char **argv)
{
	const char *scheme = NULL;
	uint64_t first = 0, count = 0, want, got, total;
	bool have_count = false;
	json_t *r, *e, *devt;
	size_t i;
	int k;

	for (k = 0; k < argc; k++) {
		if (strcmp(argv[k], "--scheme") == 0 && k + 1 < argc) {
			scheme = argv[++k];
		} else if (strcmp(argv[k], "--first") == 0 && k + 1 < argc) {
			first = parse_num("--first", argv[++k], UINT32_MAX);
		} else if (strcmp(argv[k], "--count") == 0 && k + 1 < argc) {
			count = parse_num("--count", argv[++k], UINT32_MAX);
			have_count = true;
		} else {
			unexpected(
				"names", argv[k],
				(const char *const[]){"--scheme", "--first",
						      "--count", NULL},
				"names [--scheme S] [--first N] [--count N]");
		}
	}
	if (cl->json) {
		call(cl, names_req(scheme, first, count, have_count), true);
		return 0;
	}
	/* text: page through, so no reply holds more than NAMES_PAGE */
	for (;;) {
		want = have_count && count < NAMES_PAGE ? count : NAMES_PAGE;
		if (have_count && !count)
			break;
		r = call(cl, names_req(scheme, first, want, true), false);
		got = 0;
		json_array_foreach(json_object_get(r, "names"), i, e) {
			devt = json_object_get(e, "devt");
			printf("%" PRIu64 " %s %s\n", num(e, "lun"),
			       str(e, "name"),
			       json_is_string(devt) ? json_string_value(devt)
						    : "-");
			got++;
		}
		total = num(r, "total");
		json_decref(r);
		first += got;
		if (have_count)
			count -= got;
		if (got < want || first >= total)
			break;
	}
	return 0;
}

/*
 * Writes @text to @path through a temporary file beside it and rename(),
 * mode 0600 (a configuration may hold CHAP secrets): a reader never sees
 * half a file, and a failure leaves the old one. Exits on failure.
 */
static void write_file(const char *path, const char *text, size_t len)
{
	size_t plen = strlen(path), off = 0;
	char *tmp = malloc(plen + 16);
	ssize_t n;
	int fd;

	if (!tmp)
		die("out of memory");
	snprintf(tmp, plen + 16, "%s.tmp.XXXXXX", path);
	fd = mkstemp(tmp);
	if (fd < 0) {
		int e = errno;

		free(tmp);
		die("cannot write %s: %s", path, strerror(e));
	}
	while (off < len) {
		n = write(fd, text + off, len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	if (off < len || fsync(fd) || close(fd) || rename(tmp, path)) {
		int e = errno ? errno : EIO;

		unlink(tmp);
		free(tmp);
		die("cannot write %s: %s", path, strerror(e));
	}
	free(tmp);
}

/* save-config FILE|-: the running table as a configuration. */
static int do_save_config(struct client *cl, int argc, char **argv)
{
	const char *path = NULL;
	json_t *r, *text;
	int k;

	for (k = 0; k < argc; k++) {
		if (strcmp(argv[k], "-") && argv[k][0] == '-')
			unexpected("save-config", argv[k], NULL,
				   "save-config FILE|-");
		if (path)
			die_usage(
				"save-config: one FILE (or - for standard output), not '%s' too",
				argv[k]);
		path = argv[k];
	}
	if (!path)
		die_usage(
			"save-config: where to? (save-config FILE, or - for standard output)");
	if (!path[0])
		die_usage("save-config: an empty file name");
	r = call(cl, json_pack("{s:s}", "cmd", "save-config"), cl->json);
	if (!r)
		return 0;
	text = json_object_get(r, "text");
	if (!json_is_string(text))
		die("sdswarmd sent save-config without its text");
	if (strcmp(path, "-") == 0) {
		fwrite(json_string_value(text), 1, json_string_length(text),
		       stdout);
		if (fflush(stdout) || ferror(stdout))
			die("writing the configuration: %s", strerror(errno));
	} else {
		write_file(path, json_string_value(text),
			   json_string_length(text));
		uint64_t nl = num(r, "luns"), nf = num(r, "faults");

		fprintf(stderr,
			"saved %" PRIu64 " LUN%s and %" PRIu64
			" fault rule%s to %s\n",
			nl, nl == 1 ? "" : "s", nf, nf == 1 ? "" : "s", path);
	}
	json_decref(r);
	return 0;
}

/* sessions: who is logged in, and the FUSE mount's requests in flight. */
static int do_sessions(struct client *cl, int argc, char **argv)
{
	json_t *r, *s, *fuse;
	char digests[32], age[24];
	size_t i, n;

	if (argc)
		unexpected("sessions", argv[0], NULL,
			   "sessions takes no arguments");
	r = call(cl, json_pack("{s:s}", "cmd", "sessions"), cl->json);
	if (!r)
		return 0;
	n = json_array_size(json_object_get(r, "sessions"));
	if (n)
		printf("%-9s %-6s %-21s %-21s %-13s %-15s %-9s %-7s %s -> %s\n",
		       "TRANSPORT", "TSIH", "PEER", "PORTAL", "ISID",
		       "DIGESTS (H/D)", "INFLIGHT", "AGE", "INITIATOR",
		       "TARGET");
	json_array_foreach(json_object_get(r, "sessions"), i, s) {
		snprintf(digests, sizeof(digests), "%s/%s",
			 str(s, "header_digest"), str(s, "data_digest"));
		snprintf(age, sizeof(age), "%" PRIu64 "s", num(s, "age_s"));
		printf("%-9s %-6" PRIu64 " %-21s %-21s %-13s %-15s %-9" PRIu64
		       " %-7s %s -> %s\n",
		       str(s, "transport"), num(s, "tsih"), str(s, "peer"),
		       str(s, "portal"), str(s, "isid"), digests,
		       num(s, "inflight"), age, str(s, "initiator"),
		       json_is_true(json_object_get(s, "discovery"))
			       ? "(discovery)"
			       : str(s, "target"));
	}
	printf("%zu iSCSI session%s\n", n, n == 1 ? "" : "s");
	fuse = json_object_get(r, "fuse");
	if (json_is_object(fuse))
		printf("fuse: %s, %" PRIu64 " request%s in flight\n",
		       str(fuse, "mountpoint"), num(fuse, "inflight"),
		       num(fuse, "inflight") == 1 ? "" : "s");
	json_decref(r);
	return 0;
}

/* The commands, for "did you mean". */
static const char *const commands[] = {
	"status", "lun",  "fault",	 "stats",    "names", "metrics",
	"alua",	  "help", "save-config", "sessions", NULL};

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"control", required_argument, NULL, 'c'},
		{"json", no_argument, NULL, 'j'},
		{"version", no_argument, NULL, 'V'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct client cl = {.fd = -1};
	const char *cmd, *best;
	int c, k, n, ret;
	char **rest;

	/* '+': stop at the command; what follows it is sorted below */
	while ((c = getopt_long(argc, argv, "+c:jVh", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			cl.path = optarg;
			break;
		case 'j':
			cl.json = true;
			break;
		case 'V':
			return cli_print_version("sdswarm");
		case 'h':
			usage(stdout);
			return 0;
		default:
			cli_suggest_option(stderr, "sdswarm", longopts,
					   argv[optind - 1]);
			fputs("Try 'sdswarm --help'.\n", stderr);
			return CLI_EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return CLI_EXIT_USAGE;
	}
	cmd = argv[optind];
	/* the tool's own options may also follow the command */
	rest = calloc((size_t)argc, sizeof(*rest));
	if (!rest)
		die("out of memory");
	for (k = optind + 1, n = 0; k < argc; k++) {
		if (strcmp(argv[k], "--json") == 0 ||
		    strcmp(argv[k], "-j") == 0) {
			cl.json = true;
		} else if (strcmp(argv[k], "--control") == 0 ||
			   strcmp(argv[k], "-c") == 0) {
			if (k + 1 >= argc)
				die_usage("%s: needs a socket path", argv[k]);
			cl.path = argv[++k];
		} else if (strncmp(argv[k], "--control=", 10) == 0) {
			cl.path = argv[k] + 10;
		} else if (strcmp(argv[k], "--help") == 0) {
			usage(stdout);
			free(rest);
			return 0;
		} else {
			rest[n++] = argv[k];
		}
	}
	if (strcmp(cmd, "help") == 0) {
		usage(stdout);
		free(rest);
		return 0;
	}
	if (strcmp(cmd, "status") && strcmp(cmd, "lun") &&
	    strcmp(cmd, "fault") && strcmp(cmd, "stats") &&
	    strcmp(cmd, "names") && strcmp(cmd, "metrics") &&
	    strcmp(cmd, "alua") && strcmp(cmd, "save-config") &&
	    strcmp(cmd, "sessions")) {
		best = cli_suggest(cmd, commands, ARRAY_SIZE(commands));
		if (best)
			fprintf(stderr,
				"sdswarm: unknown command '%s' (did you mean %s?)\n",
				cmd, best);
		else
			fprintf(stderr, "sdswarm: unknown command '%s'\n", cmd);
		usage(stderr);
		free(rest);
		return CLI_EXIT_USAGE;
	}
	/* each command checks its arguments, then connects (in call()) */
	if (strcmp(cmd, "status") == 0)
		ret = do_status(&cl, n, rest);
	else if (strcmp(cmd, "lun") == 0)
		ret = do_lun(&cl, n, rest);
	else if (strcmp(cmd, "fault") == 0)
		ret = do_fault(&cl, n, rest);
	else if (strcmp(cmd, "stats") == 0)
		ret = do_stats(&cl, n, rest);
	else if (strcmp(cmd, "metrics") == 0)
		ret = do_metrics(&cl, n, rest);
	else if (strcmp(cmd, "alua") == 0)
		ret = do_alua(&cl, n, rest);
	else if (strcmp(cmd, "save-config") == 0)
		ret = do_save_config(&cl, n, rest);
	else if (strcmp(cmd, "sessions") == 0)
		ret = do_sessions(&cl, n, rest);
	else
		ret = do_names(&cl, n, rest);
	if (cl.fd >= 0)
		close(cl.fd);
	free(cl.line);
	free(rest);
	return ret;
}
