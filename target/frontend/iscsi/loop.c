// SPDX-License-Identifier: MIT
/*
 * The event loops: N worker threads, each with its own epoll over the
 * non-blocking sockets of the connections it owns (handed out round-robin
 * by worker 0, which also owns the listening socket), an eventfd for its
 * mail and one timerfd for both the delayed completions (a min-heap of
 * deadlines) and a once-a-second tick (pings, login and ping timeouts,
 * LUN-change Async Messages). No thread per connection or per LUN; each
 * round handles every ready event, then flushes each touched connection
 * once.
 *
 * LUN changes: lun.h has no callback into front-end threads, so each tick
 * compares lun_luns_generation() with what each connection last reported
 * (an atomic load per worker per second, nothing per command).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "iscsi.h"
#include "iscsi_i.h"
#include "log.h"
#include "lun.h"
#include "target.h"

#define TICK_NS 1000000000ull
#define MAX_EVENTS 128

struct iscsi_msg {
	enum iscsi_msg_kind kind;
	int fd;
	uint64_t conn_id;
	uint32_t lun;
	uint64_t before_ns; /* the abort messages: tasks taken up to it */
	uint8_t addr[16]; /* ISCSI_MSG_CONN: the peer */
	struct iscsi_msg *next;
};

struct timer_ent {
	uint64_t deadline;
	struct iscsi_conn *c;
	unsigned int slot;
};

struct iscsi_worker {
	struct iscsi_fe *fe;
	unsigned int index;
	pthread_t thread;
	bool started;
	_Atomic bool stop;
	int epfd;
	int evfd;
	int tfd;
	pthread_mutex_t mail_lock;
	struct iscsi_msg *mail, *mail_tail;
	struct iscsi_conn *conns;
	unsigned int nconns;
	struct iscsi_conn *dirty;
	struct timer_ent *heap;
	unsigned int nheap, heap_cap;
	uint64_t next_tick;
	uint64_t armed; /* the timerfd's deadline now, 0 none */
	struct scsi_stats stats;
};

uint64_t iscsi_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct scsi_stats *iscsi_worker_stats(struct iscsi_worker *w)
{
	return &w->stats;
}

void iscsi_worker_dirty(struct iscsi_worker *w, struct iscsi_conn *c)
{
	if (c->dirty)
		return;
	c->dirty = true;
	c->dirty_next = w->dirty;
	w->dirty = c;
}

static int mail_post(struct iscsi_worker *w, const struct iscsi_msg *msg)
{
	struct iscsi_msg *m = malloc(sizeof(*m));
	uint64_t one = 1;

	if (!m)
		return -ENOMEM;
	*m = *msg;
	m->next = NULL;
	pthread_mutex_lock(&w->mail_lock);
	if (w->mail_tail)
		w->mail_tail->next = m;
	else
		w->mail = m;
	w->mail_tail = m;
	pthread_mutex_unlock(&w->mail_lock);
	/* an eventfd counter cannot overflow in practice; EAGAIN is fine */
	if (write(w->evfd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		log_warn("iscsi: worker %u wake-up: %s", w->index,
			 strerror(errno));
	return 0;
}

int iscsi_worker_post(struct iscsi_worker *w, enum iscsi_msg_kind kind, int fd,
		      uint64_t conn_id, uint32_t lun)
{
	struct iscsi_msg m = {.kind = kind,
			      .fd = fd,
			      .conn_id = conn_id,
			      .lun = lun,
			      .before_ns = UINT64_MAX};

	return mail_post(w, &m);
}

int iscsi_worker_post_abort(struct iscsi_worker *w, enum iscsi_msg_kind kind,
			    uint64_t conn_id, uint32_t lun, uint64_t before_ns)
{
	struct iscsi_msg m = {.kind = kind,
			      .fd = -1,
			      .conn_id = conn_id,
			      .lun = lun,
			      .before_ns = before_ns};

	return mail_post(w, &m);
}

/* ---- pre-login connections ----------------------------------------------- */

/*
 * An open-addressing table (linear probing, twice max_login_connections
 * slots) of the source addresses with connections not yet logged in: a
 * few KiB, O(1) per accept and per login.
 */
static unsigned int pre_slot(const struct iscsi_fe *fe, const uint8_t *addr)
{
	uint32_t h = 2166136261u; /* FNV-1a */
	unsigned int i, k;

	for (k = 0; k < 16; k++)
		h = (h ^ addr[k]) * 16777619u;
	for (i = h & fe->pre_mask; fe->pre[i].count; i = (i + 1) & fe->pre_mask)
		if (!memcmp(fe->pre[i].addr, addr, 16))
			break;
	return i;
}

/* Counts a new connection from @addr. Return: false over a limit. */
static bool pre_get(struct iscsi_fe *fe, const uint8_t *addr)
{
	const struct cfg_iscsi *ic = &fe->icfg;
	struct iscsi_pre_addr *e;
	bool ok = false;

	pthread_mutex_lock(&fe->pre_lock);
	e = &fe->pre[pre_slot(fe, addr)];
	if (atomic_load_explicit(&fe->pre_total, memory_order_relaxed) <
		    ic->max_login_connections &&
	    e->count < ic->max_login_per_address) {
		memcpy(e->addr, addr, 16);
		e->count++;
		atomic_fetch_add_explicit(&fe->pre_total, 1,
					  memory_order_relaxed);
		ok = true;
	}
	pthread_mutex_unlock(&fe->pre_lock);
	return ok;
}

static void pre_release(struct iscsi_fe *fe, const uint8_t *addr)
{
	unsigned int i, j, home;

	pthread_mutex_lock(&fe->pre_lock);
	i = pre_slot(fe, addr);
	if (fe->pre[i].count && --fe->pre[i].count == 0) {
		/* backward-shift deletion keeps every probe chain whole */
		for (j = (i + 1) & fe->pre_mask; fe->pre[j].count;
		     j = (j + 1) & fe->pre_mask) {
			uint32_t h = 2166136261u;
			unsigned int k;

			for (k = 0; k < 16; k++)
				h = (h ^ fe->pre[j].addr[k]) * 16777619u;
			home = h & fe->pre_mask;
			/* j's entry may move to i if i lies on its chain */
			if (((j - home) & fe->pre_mask) >=
			    ((j - i) & fe->pre_mask)) {
				fe->pre[i] = fe->pre[j];
				fe->pre[j].count = 0;
				i = j;
			}
		}
	}
	atomic_fetch_sub_explicit(&fe->pre_total, 1, memory_order_relaxed);
	pthread_mutex_unlock(&fe->pre_lock);
}

void iscsi_prelogin_put(struct iscsi_conn *c)
{
	if (!c->prelogin)
		return;
	c->prelogin = false;
	pre_release(c->fe, c->addr);
}

/* The key of a peer address: IPv6 as it is, IPv4 mapped (::ffff:a.b.c.d). */
static void addr_key(const struct sockaddr_storage *ss, uint8_t *key)
{
	memset(key, 0, 16);
	if (ss->ss_family == AF_INET6) {
		memcpy(key, &((const struct sockaddr_in6 *)ss)->sin6_addr, 16);
	} else if (ss->ss_family == AF_INET) {
		key[10] = key[11] = 0xff;
		memcpy(key + 12, &((const struct sockaddr_in *)ss)->sin_addr,
		       4);
	}
}

void iscsi_fe_broadcast_lun(struct iscsi_fe *fe, uint32_t lun,
			    uint64_t except_conn)
{
	uint64_t now = iscsi_now_ns();
	unsigned int i;

	for (i = 0; i < fe->nworkers; i++)
		iscsi_worker_post_abort(fe->workers[i], ISCSI_MSG_ABORT_LUN,
					except_conn, lun, now);
}

/* ---- timer heap ---------------------------------------------------------- */

static void heap_set(struct iscsi_worker *w, unsigned int i, struct timer_ent e)
{
	w->heap[i] = e;
	e.c->tasks[e.slot].heap_idx = i;
}

static void heap_up(struct iscsi_worker *w, unsigned int i)
{
	struct timer_ent e = w->heap[i];

	while (i) {
		unsigned int p = (i - 1) / 2;

		if (w->heap[p].deadline <= e.deadline)
			break;
		heap_set(w, i, w->heap[p]);
		i = p;
	}
	heap_set(w, i, e);
}

static void heap_down(struct iscsi_worker *w, unsigned int i)
{
	struct timer_ent e = w->heap[i];

	for (;;) {
		unsigned int l = 2 * i + 1, m = l;

		if (l >= w->nheap)
			break;
		if (l + 1 < w->nheap &&
		    w->heap[l + 1].deadline < w->heap[l].deadline)
			m = l + 1;
		if (w->heap[m].deadline >= e.deadline)
			break;
		heap_set(w, i, w->heap[m]);
		i = m;
	}
	heap_set(w, i, e);
}

void iscsi_timer_add(struct iscsi_worker *w, struct iscsi_conn *c,
		     unsigned int slot, uint64_t deadline)
{
	struct timer_ent *nh;

	if (w->nheap == w->heap_cap) {
		/* grows to the most delayed commands ever at once, then stays */
		unsigned int cap = w->heap_cap ? 2 * w->heap_cap : 256;

		nh = realloc(w->heap, cap * sizeof(*nh));
		if (!nh) {
			/* no room to wait: complete it now, undelayed */
			iscsi_conn_timer_fired(c, slot);
			return;
		}
		w->heap = nh;
		w->heap_cap = cap;
	}
	w->heap[w->nheap] =
		(struct timer_ent){.deadline = deadline, .c = c, .slot = slot};
	c->tasks[slot].heap_idx = w->nheap;
	heap_up(w, w->nheap++);
}

void iscsi_timer_del(struct iscsi_worker *w, struct iscsi_conn *c,
		     unsigned int slot)
{
	unsigned int i = c->tasks[slot].heap_idx;

	if (i >= w->nheap || w->heap[i].c != c || w->heap[i].slot != slot)
		return;
	w->nheap--;
	if (i == w->nheap)
		return;
	heap_set(w, i, w->heap[w->nheap]);
	heap_down(w, i);
	heap_up(w, i);
}

static void timers_run(struct iscsi_worker *w, uint64_t now)
{
	unsigned int guard;

	/* bounded by the heap's size at entry: firing adds nothing */
	for (guard = w->nheap; guard && w->nheap; guard--) {
		struct timer_ent e = w->heap[0];

		if (e.deadline > now)
			break;
		w->nheap--;
		if (w->nheap) {
			heap_set(w, 0, w->heap[w->nheap]);
			heap_down(w, 0);
		}
		iscsi_conn_timer_fired(e.c, e.slot);
	}
}

static void timer_arm(struct iscsi_worker *w)
{
	uint64_t when = w->next_tick;
	struct itimerspec its = {0};

	if (w->nheap && w->heap[0].deadline < when)
		when = w->heap[0].deadline;
	if (when == w->armed)
		return;
	its.it_value.tv_sec = (time_t)(when / 1000000000ull);
	its.it_value.tv_nsec = (long)(when % 1000000000ull);
	if (!its.it_value.tv_sec && !its.it_value.tv_nsec)
		its.it_value.tv_nsec = 1;
	if (timerfd_settime(w->tfd, TFD_TIMER_ABSTIME, &its, NULL) == 0)
		w->armed = when;
}

/* ---- connections ------------------------------------------------------- */

static void conn_close(struct iscsi_worker *w, struct iscsi_conn *c)
{
	epoll_ctl(w->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	if (c->prev)
		c->prev->next = c->next;
	else
		w->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	w->nconns--;
	log_debug("iscsi: %s: connection closed", c->peer);
	iscsi_conn_destroy(c);
}

/* A new connection on @portal, already counted by pre_get() for @addr. */
static void conn_add(struct iscsi_worker *w, int fd, const uint8_t *addr,
		     unsigned int portal)
{
	struct epoll_event ev = {.events = EPOLLIN};
	struct iscsi_conn *c;

	if (iscsi_conn_create(&c, w->fe, w, fd)) {
		log_warn("iscsi: no memory for a connection");
		pre_release(w->fe, addr);
		return;
	}
	memcpy(c->addr, addr, 16);
	c->prelogin = true;
	c->portal = portal < w->fe->nportals ? portal : 0;
	ev.data.ptr = c;
	if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		log_warn("iscsi: epoll: %s", strerror(errno));
		iscsi_conn_destroy(c);
		return;
	}
	c->events = EPOLLIN;
	c->next = w->conns;
	if (w->conns)
		w->conns->prev = c;
	w->conns = c;
	w->nconns++;
	log_debug("iscsi: %s: connected (worker %u)", c->peer, w->index);
}

static struct iscsi_conn *conn_find(struct iscsi_worker *w, uint64_t id)
{
	struct iscsi_conn *c;

	for (c = w->conns; c; c = c->next)
		if (c->id == id)
			return c;
	return NULL;
}

static void mail_run(struct iscsi_worker *w)
{
	struct iscsi_msg *m, *next;
	struct iscsi_conn *c;
	uint64_t n;

	if (read(w->evfd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		log_warn("iscsi: worker %u mail: %s", w->index,
			 strerror(errno));
	pthread_mutex_lock(&w->mail_lock);
	m = w->mail;
	w->mail = w->mail_tail = NULL;
	pthread_mutex_unlock(&w->mail_lock);
	for (; m; m = next) {
		next = m->next;
		switch (m->kind) {
		case ISCSI_MSG_CONN:
			/* the portal index rides in the lun field */
			conn_add(w, m->fd, m->addr, m->lun);
			break;
		case ISCSI_MSG_ABORT_LUN:
			for (c = w->conns; c; c = c->next)
				if (c->id != m->conn_id)
					iscsi_conn_abort(c, m->lun,
							 m->before_ns);
			break;
		default:
			c = conn_find(w, m->conn_id);
			if (!c)
				break;
			if (m->kind == ISCSI_MSG_ABORT_CONN) {
				iscsi_conn_abort(c, m->lun, m->before_ns);
			} else if (m->kind == ISCSI_MSG_KILL) {
				c->state = ISCSI_CONN_DEAD;
			} else {
				/* CLOSE: the connection ends, all of it goes */
				iscsi_conn_abort(c, ISCSI_LUN_ALL, UINT64_MAX);
				if (c->state < ISCSI_CONN_CLOSING)
					c->state = ISCSI_CONN_CLOSING;
			}
			iscsi_worker_dirty(w, c);
			break;
		}
		free(m);
	}
}

/*
 * Stops or resumes waiting on the listeners (worker 0's epoll has them).
 * Each listener's epoll data is its slot in fe->listen_fd: the portal.
 */
static void accept_pause(struct iscsi_fe *fe, struct iscsi_worker *w,
			 bool pause)
{
	unsigned int p;
	bool ok = true;

	for (p = 0; p < fe->nportals; p++) {
		struct epoll_event ev = {.events = pause ? 0 : EPOLLIN,
					 .data.ptr = &fe->listen_fd[p]};

		if (epoll_ctl(w->epfd, EPOLL_CTL_MOD, fe->listen_fd[p], &ev) <
		    0) {
			log_warn("iscsi: listener: %s", strerror(errno));
			ok = false;
		}
	}
	if (ok)
		fe->accept_paused = pause;
}

/* The lowest descriptor number an iSCSI connection may not have. */
static unsigned long fd_ceiling(void)
{
	struct rlimit rl;
	unsigned long lim, reserve;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur == RLIM_INFINITY ||
	    rl.rlim_cur > (1ul << 30))
		return 1ul << 30;
	lim = (unsigned long)rl.rlim_cur;
	reserve = lim / 4 < ISCSI_FD_RESERVE ? lim / 4 : ISCSI_FD_RESERVE;
	return lim - reserve;
}

static void accept_run(struct iscsi_worker *w, unsigned int portal)
{
	struct iscsi_fe *fe = w->fe;
	struct iscsi_msg m = {.kind = ISCSI_MSG_CONN};
	struct sockaddr_storage ss;
	socklen_t sl;
	unsigned long ceiling = fd_ceiling();
	unsigned int i, k;
	int fd, one = 1;

	/* bounded: the rest wait for the next round */
	for (i = 0; i < 64; i++) {
		sl = sizeof(ss);
		fd = accept4(fe->listen_fd[portal], (struct sockaddr *)&ss, &sl,
			     SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return;
			/*
			 * Out of descriptors or memory: the connection stays
			 * queued and the listener readable, so epoll would
			 * wake at once, forever. Stop listening until the
			 * next tick; the initiator's connect waits or retries.
			 */
			log_warn(
				"iscsi: accept: %s; not accepting for a second",
				strerror(errno));
			accept_pause(fe, w, true);
			return;
		}
		/*
		 * Refused at once, before any memory is spent on it: a
		 * connection on the descriptors kept for the rest of the
		 * daemon, or one past the pre-login limits (an
		 * unauthenticated flood). Counted, logged once a tick.
		 */
		if ((unsigned long)fd >= ceiling) {
			close(fd);
			fe->refused_fds++;
			continue;
		}
		addr_key(&ss, m.addr);
		if (!pre_get(fe, m.addr)) {
			close(fd);
			fe->refused_login++;
			continue;
		}
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		k = atomic_fetch_add(&fe->next_worker, 1) % fe->nworkers;
		m.fd = fd;
		m.lun = portal;
		if (fe->workers[k] == w) {
			conn_add(w, fd, m.addr, portal);
		} else if (mail_post(fe->workers[k], &m)) {
			pre_release(fe, m.addr);
			close(fd);
		}
	}
}

static void tick(struct iscsi_worker *w, uint64_t now)
{
	unsigned int gen = lun_luns_generation(w->fe->tgt->luns);
	struct iscsi_conn *c;

	/* only worker 0 has the listener and writes accept_paused */
	if (w->index == 0 && w->fe->accept_paused)
		accept_pause(w->fe, w, false);
	if (w->index == 0 && (w->fe->refused_login || w->fe->refused_fds)) {
		log_warn(
			"iscsi: closed %u connection%s at accept: %u over max_login_connections or max_login_per_address, %u on the descriptors kept for the daemon",
			w->fe->refused_login + w->fe->refused_fds,
			w->fe->refused_login + w->fe->refused_fds == 1 ? ""
								       : "s",
			w->fe->refused_login, w->fe->refused_fds);
		w->fe->refused_login = w->fe->refused_fds = 0;
	}
	for (c = w->conns; c; c = c->next) {
		iscsi_conn_tick(c, now, gen);
		if (c->state != ISCSI_CONN_FFP)
			iscsi_worker_dirty(w, c);
	}
	/* connections with new output were marked dirty as they queued it */
}

/* Input read but held back for transmit room, which there is now. */
static bool rx_held(const struct iscsi_conn *c)
{
	return c->state <= ISCSI_CONN_FFP && c->roff < c->rlen &&
	       !iscsi_conn_rx_blocked(c);
}

/* Flushes every touched connection once, closes the finished ones. */
static void dirty_run(struct iscsi_worker *w)
{
	struct iscsi_conn *c, *list = w->dirty;
	struct epoll_event ev;
	uint32_t want;
	int r;

	w->dirty = NULL;
	while ((c = list)) {
		list = c->dirty_next;
		c->dirty = false;
		r = iscsi_conn_flush(c);
		if (r >= 0 && rx_held(c)) {
			/* input held back for transmit room: go on with it */
			iscsi_conn_readable(c);
			r = iscsi_conn_flush(c);
			/*
			 * room again, input still held: the next round, not
			 * epoll (the socket may have nothing more to report)
			 */
			if (r >= 0 && rx_held(c))
				iscsi_worker_dirty(w, c);
		}
		if (r < 0 || c->state == ISCSI_CONN_DEAD ||
		    (c->state == ISCSI_CONN_CLOSING && r == 1)) {
			if (c->dirty) {
				/* re-marked while flushing: unlink it first */
				struct iscsi_conn **pp = &w->dirty;

				while (*pp && *pp != c)
					pp = &(*pp)->dirty_next;
				if (*pp)
					*pp = c->dirty_next;
			}
			conn_close(w, c);
			continue;
		}
		want = 0;
		if (c->state <= ISCSI_CONN_FFP && !iscsi_conn_rx_blocked(c))
			want |= EPOLLIN;
		if (r == 0)
			want |= EPOLLOUT;
		if (want != c->events) {
			ev.events = want;
			ev.data.ptr = c;
			if (epoll_ctl(w->epfd, EPOLL_CTL_MOD, c->fd, &ev) == 0)
				c->events = want;
		}
	}
}

static void *worker_main(void *arg)
{
	struct iscsi_worker *w = arg;
	struct epoll_event evs[MAX_EVENTS];
	uint64_t now, exp;
	int n, i;

	w->next_tick = iscsi_now_ns() + TICK_NS;
	while (!atomic_load(&w->stop)) {
		timer_arm(w);
		n = epoll_wait(w->epfd, evs, MAX_EVENTS, w->dirty ? 0 : -1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			log_err("iscsi: worker %u: epoll_wait: %s", w->index,
				strerror(errno));
			break;
		}
		for (i = 0; i < n; i++) {
			void *p = evs[i].data.ptr;

			if (p == &w->evfd) {
				mail_run(w);
			} else if (p == &w->tfd) {
				if (read(w->tfd, &exp, sizeof(exp)) < 0 &&
				    errno != EAGAIN)
					log_warn("iscsi: timerfd: %s",
						 strerror(errno));
				w->armed = 0;
			} else if ((int *)p >= &w->fe->listen_fd[0] &&
				   (int *)p <
					   &w->fe->listen_fd[w->fe->nportals]) {
				accept_run(w, (unsigned int)((int *)p -
							     w->fe->listen_fd));
			} else {
				struct iscsi_conn *c = p;

				if (evs[i].events &
				    (EPOLLIN | EPOLLERR | EPOLLHUP))
					iscsi_conn_readable(c);
				iscsi_worker_dirty(w, c);
			}
		}
		now = iscsi_now_ns();
		timers_run(w, now);
		if (now >= w->next_tick) {
			tick(w, now);
			w->next_tick = now + TICK_NS;
		}
		dirty_run(w);
	}
	while (w->conns)
		conn_close(w, w->conns);
	return NULL;
}

/* ---- start and stop ------------------------------------------------------ */

static int worker_create(struct iscsi_fe *fe, unsigned int index,
			 struct iscsi_worker **out)
{
	struct epoll_event ev = {.events = EPOLLIN};
	struct iscsi_worker *w;
	int ret = -ENOMEM;

	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->fe = fe;
	w->index = index;
	w->epfd = w->evfd = w->tfd = -1;
	pthread_mutex_init(&w->mail_lock, NULL);
	w->epfd = epoll_create1(EPOLL_CLOEXEC);
	w->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	w->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (w->epfd < 0 || w->evfd < 0 || w->tfd < 0)
		goto out_errno;
	ev.data.ptr = &w->evfd;
	if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->evfd, &ev) < 0)
		goto out_errno;
	ev.data.ptr = &w->tfd;
	if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->tfd, &ev) < 0)
		goto out_errno;
	*out = w;
	return 0;
out_errno:
	ret = -errno;
	if (w->tfd >= 0)
		close(w->tfd);
	if (w->evfd >= 0)
		close(w->evfd);
	if (w->epfd >= 0)
		close(w->epfd);
	pthread_mutex_destroy(&w->mail_lock);
	free(w);
	return ret;
}

static void worker_destroy(struct iscsi_worker *w)
{
	struct iscsi_msg *m, *next;

	for (m = w->mail; m; m = next) {
		next = m->next;
		if (m->kind == ISCSI_MSG_CONN) {
			pre_release(w->fe, m->addr);
			close(m->fd);
		}
		free(m);
	}
	close(w->tfd);
	close(w->evfd);
	close(w->epfd);
	pthread_mutex_destroy(&w->mail_lock);
	free(w->heap);
	free(w);
}

/*
 * Listen on @ic; a port of 0 becomes the one the kernel picked, in @ic's
 * port and text.
 */
static int listen_on(struct cfg_portal *ic, int *out)
{
	struct sockaddr_storage ss = {0};
	socklen_t sl;
	int fd, one = 1, ret;

	if (strchr(ic->host, ':')) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;

		a->sin6_family = AF_INET6;
		a->sin6_port = htons(ic->port);
		if (inet_pton(AF_INET6, ic->host, &a->sin6_addr) != 1)
			return -EINVAL;
		sl = sizeof(*a);
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)&ss;

		a->sin_family = AF_INET;
		a->sin_port = htons(ic->port);
		if (inet_pton(AF_INET, ic->host, &a->sin_addr) != 1)
			return -EINVAL;
		sl = sizeof(*a);
	}
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
		    0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, sl) < 0 || listen(fd, 1024) < 0) {
		ret = -errno;
		close(fd);
		return ret;
	}
	if (!ic->port) {
		sl = sizeof(ss);
		if (getsockname(fd, (struct sockaddr *)&ss, &sl) < 0) {
			ret = -errno;
			close(fd);
			return ret;
		}
		ic->port =
			ntohs(ss.ss_family == AF_INET6
				      ? ((struct sockaddr_in6 *)&ss)->sin6_port
				      : ((struct sockaddr_in *)&ss)->sin_port);
		snprintf(ic->text, sizeof(ic->text),
			 ss.ss_family == AF_INET6 ? "[%s]:%u" : "%s:%u",
			 ic->host, ic->port);
	}
	*out = fd;
	return 0;
}

/*
 * PREEMPT AND ABORT (scsi/'s callback, on the thread running it): each
 * preempted nexus is one of our connections; its worker aborts the tasks
 * it had taken by now. One it takes after (its initiator may have seen the
 * preemption already) is not aborted by the message arriving late: it
 * runs, and gets RESERVATION CONFLICT if it is not allowed.
 */
static void pr_abort(void *arg, const struct scsi_cmd *self, uint32_t lun,
		     const uint32_t *nexus, unsigned int n)
{
	struct iscsi_fe *fe = arg;
	uint64_t now = iscsi_now_ns();
	struct iscsi_worker *w;
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (nexus[i] == self->nexus)
			continue;
		w = iscsi_sess_worker(&fe->sessions, nexus[i]);
		if (w)
			iscsi_worker_post_abort(w, ISCSI_MSG_ABORT_CONN,
						nexus[i], lun, now);
	}
}

/* The registry's sessions for `sdswarm sessions` (target_sessions_fn). */
static unsigned int fe_sessions(void *arg, struct target_session *out,
				unsigned int cap)
{
	struct iscsi_fe *fe = arg;
	struct iscsi_sessions *s = &fe->sessions;
	uint64_t now = iscsi_now_ns();
	unsigned int i, n = 0;

	pthread_mutex_lock(&s->lock);
	for (i = 0; i < s->cap; i++) {
		const struct iscsi_sess_entry *e = &s->v[i];
		struct target_session *cs = &out[n];

		if (!e->used)
			continue;
		if (n++ >= cap)
			continue;
		memset(cs, 0, sizeof(*cs));
		cs->transport = "iscsi";
		snprintf(cs->initiator, sizeof(cs->initiator), "%s",
			 e->initiator);
		if (e->target >= 0 && (unsigned int)e->target < fe->ntargets)
			snprintf(cs->target, sizeof(cs->target), "%s",
				 fe->names[e->target]);
		snprintf(cs->peer, sizeof(cs->peer), "%s", e->peer);
		if (e->portal < fe->nportals)
			snprintf(cs->portal, sizeof(cs->portal), "%s",
				 fe->address[e->portal]);
		snprintf(cs->isid, sizeof(cs->isid), "%02x%02x%02x%02x%02x%02x",
			 e->isid[0], e->isid[1], e->isid[2], e->isid[3],
			 e->isid[4], e->isid[5]);
		cs->tsih = e->tsih;
		cs->discovery = e->target < 0;
		cs->header_digest = e->header_digest;
		cs->data_digest = e->data_digest;
		cs->connections = 1; /* MaxConnections is 1 */
		cs->inflight =
			e->inflight ? atomic_load_explicit(e->inflight,
							   memory_order_relaxed)
				    : 0;
		cs->age_ns = now > e->born_ns ? now - e->born_ns : 0;
	}
	pthread_mutex_unlock(&s->lock);
	return n;
}

static void fe_free(struct iscsi_fe *fe)
{
	unsigned int i;

	if (fe->sessions_listed)
		target_unregister(fe->target, fe);

	for (i = 0; i < fe->nworkers; i++) {
		if (!fe->workers[i])
			continue;
		target_unregister(fe->target, &fe->workers[i]->stats);
		worker_destroy(fe->workers[i]);
	}
	free(fe->workers);
	if (fe->tgt && fe->tgt->pr_abort == pr_abort) {
		fe->tgt->pr_abort = NULL;
		fe->tgt->pr_abort_arg = NULL;
	}
	for (i = 0; i < fe->nportals; i++)
		if (fe->listen_fd[i] >= 0)
			close(fe->listen_fd[i]);
	iscsi_sess_fini(&fe->sessions);
	iscsi_ini_fini(&fe->initiators);
	free(fe->pre);
	pthread_mutex_destroy(&fe->pre_lock);
	pthread_mutex_destroy(&fe->auth.lock);
	free(fe);
}

int iscsi_fe_portal(const void *state, unsigned int i, struct cfg_portal *out)
{
	const struct iscsi_fe *fe = state;

	if (i >= fe->nportals)
		return -ENOENT;
	*out = fe->portals[i];
	return 0;
}

int iscsi_fe_start(const struct cfg_iscsi *ic, struct target *t, void **state)
{
	struct scsi_target *tgt = t->scsi;
	struct cfg_portal portals[CFG_ISCSI_MAX_PORTALS];
	struct epoll_event ev = {.events = EPOLLIN};
	struct iscsi_fe *fe;
	unsigned int i;
	int ret;

	if (!ic->enabled)
		return 1;
	fe = calloc(1, sizeof(*fe));
	if (!fe)
		return -ENOMEM;
	for (i = 0; i < CFG_ISCSI_MAX_PORTALS; i++)
		fe->listen_fd[i] = -1;
	fe->icfg = *ic;
	pthread_mutex_init(&fe->pre_lock, NULL);
	pthread_mutex_init(&fe->auth.lock, NULL);
	for (i = 4; i < 2 * ic->max_login_connections; i *= 2)
		;
	fe->pre_mask = i - 1;
	fe->pre = calloc(i, sizeof(*fe->pre));
	if (!fe->pre) {
		ret = -ENOMEM;
		goto out_free;
	}
	fe->target = t;
	fe->tgt = tgt;
	fe->offer = (struct iscsi_offer){
		.max_recv_dsl = ic->max_recv_data_segment_length,
		.max_burst = ic->max_burst_length,
		.first_burst = ic->first_burst_length,
		.immediate_data = ic->immediate_data,
		.initial_r2t = ic->initial_r2t,
	};
	fe->ntargets = ic->targets;
	for (i = 0; i < fe->ntargets; i++) {
		if (cfg_iscsi_target_name(ic, i, fe->names[i],
					  sizeof(fe->names[i])) < 0) {
			ret = -EINVAL;
			goto out_free;
		}
		fe->views[i].base = i * ic->luns_per_target;
		fe->views[i].count = ic->luns_per_target;
		fe->views[i].name = fe->names[i];
	}
	/* a configuration made by hand (no list) has the one portal */
	if (ic->nportals) {
		fe->nportals = ic->nportals;
		memcpy(portals, ic->portals, ic->nportals * sizeof(portals[0]));
	} else {
		fe->nportals = 1;
		snprintf(portals[0].text, sizeof(portals[0].text), "%s",
			 ic->portal);
		snprintf(portals[0].host, sizeof(portals[0].host), "%s",
			 ic->host);
		portals[0].port = ic->port;
	}
	if (!tgt->target_name)
		tgt->target_name = fe->names[0];
	if (!tgt->pr_abort) {
		tgt->pr_abort = pr_abort;
		tgt->pr_abort_arg = fe;
	}
	if (!tgt->protocol_valid) {
		tgt->protocol_id = SCSI_PROTOCOL_ISCSI;
		tgt->protocol_valid = true;
	}
	ret = iscsi_ini_init(&fe->initiators);
	if (ret)
		goto out_free;
	ret = iscsi_sess_init(&fe->sessions, ic->max_sessions);
	if (!ret)
		fe->sessions_listed = !target_register(
			t, &(struct target_source){.kind = TARGET_SRC_SESSIONS,
						   .obj = fe,
						   .sessions = fe_sessions});
	if (ret)
		goto out_free;
	for (i = 0; i < fe->nportals; i++) {
		ret = listen_on(&portals[i], &fe->listen_fd[i]);
		if (ret) {
			log_err("iscsi: cannot listen on %s: %s",
				portals[i].text, strerror(-ret));
			goto out_free;
		}
	}
	/* portal i is portal group i + 1: one target port, one path each;
	 * the ports are known now (a port 0 is the kernel's pick) */
	memcpy(fe->portals, portals, fe->nportals * sizeof(portals[0]));
	for (i = 0; i < fe->nportals; i++)
		snprintf(fe->address[i], sizeof(fe->address[i]),
			 strchr(portals[i].host, ':') ? "[%s]:%u,%u"
						      : "%s:%u,%u",
			 portals[i].host, portals[i].port, i + 1);
	fe->nworkers = ic->threads ? ic->threads : 1;
	fe->workers = calloc(fe->nworkers, sizeof(*fe->workers));
	if (!fe->workers) {
		ret = -ENOMEM;
		goto out_free;
	}
	for (i = 0; i < fe->nworkers; i++) {
		ret = worker_create(fe, i, &fe->workers[i]);
		if (ret)
			goto out_free;
		target_register(t, &(struct target_source){
					   .kind = TARGET_SRC_SCSI,
					   .obj = &fe->workers[i]->stats});
	}
	for (i = 0; i < fe->nportals; i++) {
		ev.data.ptr = &fe->listen_fd[i];
		if (epoll_ctl(fe->workers[0]->epfd, EPOLL_CTL_ADD,
			      fe->listen_fd[i], &ev) < 0) {
			ret = -errno;
			goto out_free;
		}
	}
	for (i = 0; i < fe->nworkers; i++) {
		ret = -pthread_create(&fe->workers[i]->thread, NULL,
				      worker_main, fe->workers[i]);
		if (ret) {
			*state = fe;
			iscsi_fe_stop(fe);
			return ret;
		}
		fe->workers[i]->started = true;
	}
	for (i = 1; i < fe->nportals; i++)
		log_notice("iscsi: portal %s: relative target port %u",
			   portals[i].text, i + 1);
	log_notice(
		"iscsi: portal %s: %u target%s of %u LUNs (%s..), %u worker%s",
		portals[0].text, fe->ntargets, fe->ntargets == 1 ? "" : "s",
		ic->luns_per_target, fe->names[0], fe->nworkers,
		fe->nworkers == 1 ? "" : "s");
	*state = fe;
	return 0;
out_free:
	fe_free(fe);
	return ret;
}

void iscsi_fe_stop(void *state)
{
	struct iscsi_fe *fe = state;
	uint64_t one = 1;
	unsigned int i;

	if (!fe)
		return;
	for (i = 0; i < fe->nworkers; i++) {
		struct iscsi_worker *w = fe->workers[i];

		if (!w || !w->started)
			continue;
		atomic_store(&w->stop, true);
		if (write(w->evfd, &one, sizeof(one)) < 0 && errno != EAGAIN)
			log_warn("iscsi: stop: %s", strerror(errno));
	}
	for (i = 0; i < fe->nworkers; i++)
		if (fe->workers[i] && fe->workers[i]->started)
			pthread_join(fe->workers[i]->thread, NULL);
	fe_free(fe);
}
