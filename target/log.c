// SPDX-License-Identifier: MIT
/*
 * Logging: format into a stack buffer, hand the line to the sink under one
 * mutex. The level check lives in the header's macros, so a disabled
 * message never reaches this file.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "log.h"

_Atomic int log_threshold = LOG_DEFAULT_LEVEL;

static pthread_mutex_t sink_lock = PTHREAD_MUTEX_INITIALIZER;
static void (*sink_fn)(void *arg, int level, const char *line);
static void *sink_arg;
static const char *ident;
static bool to_syslog;

static const char *const level_names[] = {
	[LOG_EMERG] = "emerg",	   [LOG_ALERT] = "alert",
	[LOG_CRIT] = "crit",	   [LOG_ERR] = "err",
	[LOG_WARNING] = "warning", [LOG_NOTICE] = "notice",
	[LOG_INFO] = "info",	   [LOG_DEBUG] = "debug",
	[LOG_TRACE] = "trace",
};

const char *log_level_name(int level)
{
	if (level < LOG_EMERG || level > LOG_TRACE)
		return "?";
	return level_names[level];
}

int log_level_parse(const char *text, int *level)
{
	int i;

	if (!text)
		return -EINVAL;
	if (text[0] >= '0' && text[0] <= '0' + LOG_TRACE && text[1] == '\0') {
		*level = text[0] - '0';
		return 0;
	}
	for (i = LOG_EMERG; i <= LOG_TRACE; i++) {
		if (strcmp(text, level_names[i]) == 0) {
			*level = i;
			return 0;
		}
	}
	if (strcmp(text, "error") == 0) {
		*level = LOG_ERR;
		return 0;
	}
	if (strcmp(text, "warn") == 0) {
		*level = LOG_WARNING;
		return 0;
	}
	return -EINVAL;
}

void log_set_level(int level)
{
	if (level < LOG_EMERG)
		level = LOG_EMERG;
	if (level > LOG_TRACE)
		level = LOG_TRACE;
	atomic_store_explicit(&log_threshold, level, memory_order_relaxed);
}

int log_get_level(void)
{
	return atomic_load_explicit(&log_threshold, memory_order_relaxed);
}

void log_set_sink(void (*sink)(void *arg, int level, const char *line),
		  void *arg)
{
	pthread_mutex_lock(&sink_lock);
	sink_fn = sink;
	sink_arg = arg;
	pthread_mutex_unlock(&sink_lock);
}

void log_set_ident(const char *name)
{
	pthread_mutex_lock(&sink_lock);
	ident = name;
	pthread_mutex_unlock(&sink_lock);
}

/* Caller holds sink_lock. One fprintf: stdio locks the stream for it. */
static void stderr_sink(int level, const char *line)
{
	if (ident)
		fprintf(stderr, "%s: %s: %s\n", ident, log_level_name(level),
			line);
	else
		fprintf(stderr, "%s: %s\n", log_level_name(level), line);
}

void log_open_syslog(const char *name)
{
	pthread_mutex_lock(&sink_lock);
	/* LOG_NDELAY: the socket now, not on the first message of a thread
	 * that may be in a hurry */
	openlog(name, LOG_PID | LOG_NDELAY, LOG_DAEMON);
	to_syslog = true;
	pthread_mutex_unlock(&sink_lock);
}

static void emit(int level, const char *line)
{
	pthread_mutex_lock(&sink_lock);
	/* "%s": the line holds peer-chosen text, escaped, never a format */
	if (to_syslog)
		syslog(LOG_DAEMON | (level > LOG_DEBUG ? LOG_DEBUG : level),
		       "%s", line);
	if (sink_fn)
		sink_fn(sink_arg, level, line);
	else
		stderr_sink(level, line);
	pthread_mutex_unlock(&sink_lock);
}

void log_vmsg(int level, const char *fmt, va_list ap)
{
	char line[LOG_LINE_MAX];
	int n;

	n = vsnprintf(line, sizeof(line), fmt, ap);
	if (n < 0)
		snprintf(line, sizeof(line), "(unformattable message: %s)",
			 fmt);
	else if ((size_t)n >= sizeof(line))
		memcpy(line + sizeof(line) - 4, "...", 4);
	emit(level, line);
}

void log_msg(int level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vmsg(level, fmt, ap);
	va_end(ap);
}

void log_cdb_dump(uint32_t lun, const uint8_t *cdb, unsigned int len)
{
	char line[16 + 3 * 32 + 1];
	size_t off;
	unsigned int i;

	if (len > 32)
		len = 32;
	off = (size_t)snprintf(line, sizeof(line), "lun %u: cdb", lun);
	for (i = 0; i < len && off + 4 <= sizeof(line); i++)
		off += (size_t)snprintf(line + off, sizeof(line) - off, " %02x",
					cdb[i]);
	emit(LOG_TRACE, line);
}
