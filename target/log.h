/* SPDX-License-Identifier: MIT */
/*
 * Logging: syslog levels plus a CDB-trace level, one settable sink (stderr
 * by default; tests capture), per-LUN macros. A message below the current
 * level costs one relaxed load and a compare: its arguments are not even
 * evaluated.
 */
#ifndef SDSWARM_LOG_H
#define SDSWARM_LOG_H

#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <syslog.h>

/* One past LOG_DEBUG: every CDB as hex (log_cdb()). */
#define LOG_TRACE (LOG_DEBUG + 1)
/* What the daemon logs when nothing says otherwise. */
#define LOG_DEFAULT_LEVEL LOG_NOTICE

/*
 * The current level: messages at levels numerically above it are dropped.
 * Read by log_enabled() on every call site; written only by
 * log_set_level(). Atomic so that a level change from the control thread
 * is not a data race; relaxed, since a message racing the change may go
 * either way.
 */
extern _Atomic int log_threshold;

/**
 * log_enabled() - whether a message at @level would be written.
 * @level: LOG_EMERG..LOG_TRACE.
 *
 * Context: any; one relaxed atomic load.
 */
#define log_enabled(level)                                                     \
	((level) <= atomic_load_explicit(&log_threshold, memory_order_relaxed))

/* The check comes first, so a disabled message formats nothing. */
#define log_at(level, ...)                                                     \
	do {                                                                   \
		if (log_enabled(level))                                        \
			log_msg((level), __VA_ARGS__);                         \
	} while (0)

#define log_err(...) log_at(LOG_ERR, __VA_ARGS__)
#define log_warn(...) log_at(LOG_WARNING, __VA_ARGS__)
#define log_notice(...) log_at(LOG_NOTICE, __VA_ARGS__)
#define log_info(...) log_at(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_at(LOG_DEBUG, __VA_ARGS__)

/* Per-LUN messages: "lun 17: ..." so a grep for one LUN finds them all. */
#define log_lun(level, lun, fmt, ...)                                          \
	log_at((level), "lun %u: " fmt, (unsigned int)(lun), ##__VA_ARGS__)
#define log_lun_err(lun, fmt, ...) log_lun(LOG_ERR, lun, fmt, ##__VA_ARGS__)
#define log_lun_warn(lun, fmt, ...)                                            \
	log_lun(LOG_WARNING, lun, fmt, ##__VA_ARGS__)
#define log_lun_info(lun, fmt, ...) log_lun(LOG_INFO, lun, fmt, ##__VA_ARGS__)
#define log_lun_debug(lun, fmt, ...) log_lun(LOG_DEBUG, lun, fmt, ##__VA_ARGS__)

/* A CDB at trace level: "lun 3: cdb 28 00 00 00 08 00 00 00 08 00". */
#define log_cdb(lun, cdb, len)                                                 \
	do {                                                                   \
		if (log_enabled(LOG_TRACE))                                    \
			log_cdb_dump((lun), (cdb), (len));                     \
	} while (0)

/* Longest message a sink receives; longer ones are cut, ending in "...". */
#define LOG_LINE_MAX 1024

/**
 * log_msg() - format and write one message, whatever the level.
 * @level: LOG_EMERG..LOG_TRACE.
 * @fmt: printf format; no trailing newline.
 *
 * Call through the macros above, which check the level first.
 * Context: any thread; the sink is called under a mutex, so sinks need no
 * locking of their own and lines never interleave.
 */
void log_msg(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/**
 * log_vmsg() - log_msg() with a va_list.
 * @level: LOG_EMERG..LOG_TRACE.
 * @fmt: printf format.
 * @ap: its arguments.
 *
 * Context: any thread.
 */
void log_vmsg(int level, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

/**
 * log_cdb_dump() - write a CDB as hex at LOG_TRACE (use log_cdb()).
 * @lun: the LUN it is addressed to.
 * @cdb: the CDB bytes.
 * @len: their number; at most 32 are shown.
 *
 * Context: any thread.
 */
void log_cdb_dump(uint32_t lun, const uint8_t *cdb, unsigned int len);

/**
 * log_set_level() - change the level.
 * @level: LOG_EMERG..LOG_TRACE; out-of-range values are clamped.
 *
 * Context: any thread.
 */
void log_set_level(int level);

/**
 * log_get_level() - the current level.
 *
 * Return: LOG_EMERG..LOG_TRACE.
 */
int log_get_level(void);

/**
 * log_level_name() - "emerg", "alert", "crit", "err", "warning", "notice",
 * "info", "debug" or "trace".
 * @level: a level.
 *
 * Return: the name; "?" outside LOG_EMERG..LOG_TRACE.
 */
const char *log_level_name(int level);

/**
 * log_level_parse() - a level from its name (as log_level_name(), also
 * "error" and "warn") or its number 0..8.
 * @text: the text.
 * @level: out, the level (only on success).
 *
 * Return: 0, -EINVAL.
 */
int log_level_parse(const char *text, int *level);

/**
 * log_set_sink() - send messages somewhere else.
 * @sink: called with the level and the formatted line (no newline, at most
 *	LOG_LINE_MAX - 1 bytes); NULL restores the stderr sink.
 * @arg: passed to @sink.
 *
 * Context: any thread; a message being written concurrently goes to the
 * old sink or the new one, never neither.
 */
void log_set_sink(void (*sink)(void *arg, int level, const char *line),
		  void *arg);

/**
 * log_set_ident() - the program name the stderr sink prefixes.
 * @ident: a string that outlives every later message, or NULL for none.
 */
void log_set_ident(const char *ident);

/**
 * log_open_syslog() - send every message to syslog too (openlog(3) with
 * LOG_PID, facility LOG_DAEMON), at its own priority (the trace level as
 * LOG_DEBUG); the stderr sink or log_set_sink()'s keeps its copy.
 * @ident: the syslog identity, a string that outlives the process.
 *
 * Context: once, before the threads start.
 */
void log_open_syslog(const char *ident);

#endif /* SDSWARM_LOG_H */
