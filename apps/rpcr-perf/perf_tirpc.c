/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * The baseline: the same test program (0x2f5a0001 version 1, the same procedures, the same XDR)
 * over TCP with libtirpc, the ONC RPC that Linux distributions ship.
 *
 * The server is a process of its own running svc_run() (single-threaded, as rpcbind-less
 * svc_vc services are), forked before the EAL exists. Clients are synchronous: clnt_call()
 * waits for its reply, so N calls outstanding are N threads, each with its own connection. They
 * connect with clnt_vc_create() on a socket made here (TCP_NODELAY, as clnt_tli_create() sets
 * it): clnt_create(host, ..., "tcp") would ask rpcbind for the port, and rpcbind is neither
 * needed nor usually running. libtirpc's server sets TCP_NODELAY on every connection it accepts.
 */

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "perf.h"

#ifndef RPCR_PERF_HAVE_TIRPC

bool
perf_tirpc_available(void)
{
	return false;
}

int
perf_tirpc_server_start(const struct perf_conf *c, int cpu, pid_t *pid, uint16_t *port)
{
	(void)c;
	(void)cpu;
	(void)pid;
	(void)port;
	return -ENOTSUP;
}

int
perf_tirpc_run(const struct perf_conf *c, uint16_t port, struct perf_point *pt)
{
	(void)c;
	(void)port;
	(void)pt;
	return -1;
}

#else /* RPCR_PERF_HAVE_TIRPC */

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rpc/rpc.h>

#include <rte_cycles.h>

#define CALL_TIMEOUT_S   20   /* a call that takes longer is an error */
#define THREAD_ERR_LIMIT 10   /* a thread stops after this many failed calls */
#define POINT_OVERRUN_S  30.0 /* a point that counts too few calls gives up after this */

/* Phases of a point, for the client threads. */
enum { PHASE_WARM = 0, PHASE_COUNT, PHASE_STOP };

/* opaque data<> of any length up to PERF_MAX_SIZE, decoded into a buffer we own. */
struct xdata {
	uint8_t *buf;
	uint32_t len;
	uint32_t cap;
	bool grow; /* decoding may enlarge buf (the server); else a longer item fails */
};

static bool_t
xdr_data(XDR *x, void *p)
{
	struct xdata *d = p;

	if (x->x_op == XDR_FREE)
		return TRUE; /* our buffers outlive the call */
	if (!xdr_u_int(x, &d->len))
		return FALSE;
	if (x->x_op == XDR_DECODE && d->len > d->cap) {
		uint8_t *nb;

		if (!d->grow || d->len > PERF_MAX_SIZE)
			return FALSE;
		nb = realloc(d->buf, d->len);
		if (nb == NULL)
			return FALSE;
		d->buf = nb;
		d->cap = d->len;
	}
	return d->len == 0 || xdr_opaque(x, (char *)d->buf, d->len);
}

/* void: nothing on the wire (libtirpc's xdr_void takes no arguments at all). */
static bool_t
xdr_nothing(XDR *x, void *p)
{
	(void)x;
	(void)p;
	return TRUE;
}

bool
perf_tirpc_available(void)
{
	return true;
}

/* ---- the server ---- */

static struct xdata srv_arg = {.grow = true};
static uint8_t *srv_pattern;
static uint32_t srv_pattern_len;

static void
srv_dispatch(struct svc_req *rq, SVCXPRT *xprt)
{
	uint32_t len;
	struct xdata out;

	switch (rq->rq_proc) {
	case PERF_NULL:
		svc_sendreply(xprt, (xdrproc_t)xdr_nothing, NULL);
		break;
	case PERF_ECHO:
		if (!svc_getargs(xprt, (xdrproc_t)xdr_data, (char *)&srv_arg)) {
			svcerr_decode(xprt);
			break;
		}
		svc_sendreply(xprt, (xdrproc_t)xdr_data, (char *)&srv_arg);
		break;
	case PERF_WRITE:
		if (!svc_getargs(xprt, (xdrproc_t)xdr_data, (char *)&srv_arg)) {
			svcerr_decode(xprt);
			break;
		}
		len = srv_arg.len;
		svc_sendreply(xprt, (xdrproc_t)xdr_u_int, (char *)&len);
		break;
	case PERF_READ:
		if (!svc_getargs(xprt, (xdrproc_t)xdr_u_int, (char *)&len) || len > PERF_MAX_SIZE) {
			svcerr_decode(xprt);
			break;
		}
		if (len > srv_pattern_len) {
			uint8_t *np = realloc(srv_pattern, len);
			uint32_t i;

			if (np == NULL) {
				svcerr_systemerr(xprt);
				break;
			}
			for (i = srv_pattern_len; i < len; i++)
				np[i] = perf_pattern_byte(i);
			srv_pattern = np;
			srv_pattern_len = len;
		}
		out = (struct xdata){.buf = srv_pattern, .len = len, .cap = len};
		svc_sendreply(xprt, (xdrproc_t)xdr_data, (char *)&out);
		break;
	default:
		svcerr_noproc(xprt);
		break;
	}
}

static int
resolve(const char *host, uint16_t port, struct sockaddr_in *sin)
{
	struct addrinfo hints, *ai = NULL;
	int rc;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_INET;
	hints.ai_socktype = SOCK_STREAM;
	rc = getaddrinfo(host, NULL, &hints, &ai);
	if (rc != 0 || ai == NULL) {
		fprintf(stderr, "rpcr-perf: %s: %s\n", host, gai_strerror(rc));
		return -EINVAL;
	}
	memcpy(sin, ai->ai_addr, sizeof(*sin));
	sin->sin_port = htons(port);
	freeaddrinfo(ai);
	return 0;
}

/* Listen, tell @report_fd the port, serve forever. */
static int
serve(const struct perf_conf *c, int report_fd)
{
	struct sockaddr_in sin;
	socklen_t sl = sizeof(sin);
	SVCXPRT *xprt;
	uint32_t port;
	int fd, one = 1;

	if (resolve(c->tirpc_host, c->tirpc_port, &sin) != 0)
		return 1;
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
	    bind(fd, (struct sockaddr *)&sin, sizeof(sin)) != 0 || listen(fd, 256) != 0 ||
	    getsockname(fd, (struct sockaddr *)&sin, &sl) != 0) {
		fprintf(stderr, "rpcr-perf: libtirpc server on %s:%u: %s\n", c->tirpc_host,
			c->tirpc_port, strerror(errno));
		return 1;
	}
	xprt = svc_vc_create(fd, 0, 0);
	if (xprt == NULL || !svc_reg(xprt, PERF_PROG, PERF_VERS, srv_dispatch, NULL)) {
		fprintf(stderr, "rpcr-perf: libtirpc server: svc_vc_create/svc_reg failed\n");
		return 1;
	}
	port = ntohs(sin.sin_port);
	if (write(report_fd, &port, sizeof(port)) != (ssize_t)sizeof(port))
		return 1;
	close(report_fd);
	svc_run();
	fprintf(stderr, "rpcr-perf: libtirpc server: svc_run returned\n");
	return 1;
}

int
perf_tirpc_server_start(const struct perf_conf *c, int cpu, pid_t *pid, uint16_t *port)
{
	pid_t parent = getpid(), child;
	uint32_t got;
	int pfd[2];
	ssize_t n;

	if (pipe(pfd) != 0)
		return -errno;
	fflush(NULL);
	child = fork();
	if (child < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return -errno;
	}
	if (child == 0) {
		close(pfd[0]);
		/* Never outlive the benchmark; its end comes from the parent (SIGTERM). */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(1);
		/* Not the benchmark's handlers: SIGTERM ends this process at once. */
		signal(SIGINT, SIG_IGN);
		signal(SIGTERM, SIG_DFL);
		if (cpu >= 0) {
			cpu_set_t set;

			CPU_ZERO(&set);
			CPU_SET(cpu, &set);
			sched_setaffinity(0, sizeof(set), &set);
		}
		_exit(serve(c, pfd[1]));
	}
	close(pfd[1]);
	do {
		n = read(pfd[0], &got, sizeof(got));
	} while (n < 0 && errno == EINTR);
	close(pfd[0]);
	if (n != (ssize_t)sizeof(got)) {
		kill(child, SIGKILL);
		return -EIO;
	}
	*pid = child;
	*port = (uint16_t)got;
	return 0;
}

/* ---- the client ---- */

struct trun;

struct tthread {
	pthread_t tid;
	bool started;
	struct trun *run;
	CLIENT *cl;
	struct xdata arg, res;
	uint32_t seq;
	/* Written by the thread, read by the main thread for the progress line (relaxed). */
	uint64_t calls, bytes;
	/* Read after the join. */
	uint64_t verify_tsc, errors, verify_errors;
	struct perf_hist *hist;
	int exited;
	char err[160];
};

struct trun {
	const struct perf_conf *c;
	const struct perf_point *pt;
	const uint8_t *pattern;
	int phase;        /* PHASE_*, release-stored by the main thread */
	uint64_t t_start; /* TSC: the window opens (stored before PHASE_COUNT) */
	uint64_t t_end;   /* and closes (stored before PHASE_STOP) */
	pthread_barrier_t go;
};

static void __attribute__((format(printf, 3, 4)))
thread_error(struct tthread *t, bool verify, const char *fmt, ...)
{
	va_list ap;

	if (verify)
		t->verify_errors++;
	else
		t->errors++;
	if (t->err[0] != '\0')
		return;
	va_start(ap, fmt);
	vsnprintf(t->err, sizeof(t->err), fmt, ap);
	va_end(ap);
}

static void
thread_verify(struct tthread *t)
{
	const struct perf_point *pt = t->run->pt;
	uint32_t len = pt->size, off;

	switch (pt->proc) {
	case PERF_WRITE:
		return; /* checked by the caller */
	case PERF_ECHO:
	case PERF_READ:
		if (t->res.len != len) {
			thread_error(t, true, "%s %u bytes: %u bytes came back",
				     perf_proc_name(pt->proc), len, t->res.len);
			return;
		}
		for (off = 0; off < len; off += 65536) {
			uint32_t n = len - off < 65536 ? len - off : 65536;
			const uint8_t *want =
				pt->proc == PERF_ECHO ? t->arg.buf + off : t->run->pattern;

			if (memcmp(t->res.buf + off, want, n) != 0) {
				thread_error(t, true, "%s %u bytes: data differs near byte %u",
					     perf_proc_name(pt->proc), len, off);
				return;
			}
		}
		/* As on the rpcr side: a result that was not written cannot pass. */
		for (off = 0; off < len; off += 256)
			t->res.buf[off] ^= 0xff;
		return;
	default:
		return;
	}
}

static void *
thread_main(void *arg)
{
	struct tthread *t = arg;
	struct trun *run = t->run;
	const struct perf_point *pt = run->pt;
	struct timeval tmo = {CALL_TIMEOUT_S, 0};

	pthread_barrier_wait(&run->go);
	while (__atomic_load_n(&run->phase, __ATOMIC_ACQUIRE) != PHASE_STOP) {
		enum clnt_stat st;
		uint32_t len = pt->size, count = UINT32_MAX;
		uint64_t t0, t1;
		bool counted;
		int ph;

		t->seq++;
		if (pt->proc == PERF_ECHO && len >= 4)
			memcpy(t->arg.buf, &t->seq, 4);
		t->res.len = UINT32_MAX;
		t0 = rte_rdtsc();
		switch (pt->proc) {
		case PERF_ECHO:
			st = clnt_call(t->cl, PERF_ECHO, (xdrproc_t)xdr_data, (char *)&t->arg,
				       (xdrproc_t)xdr_data, (char *)&t->res, tmo);
			break;
		case PERF_WRITE:
			st = clnt_call(t->cl, PERF_WRITE, (xdrproc_t)xdr_data, (char *)&t->arg,
				       (xdrproc_t)xdr_u_int, (char *)&count, tmo);
			break;
		case PERF_READ:
			st = clnt_call(t->cl, PERF_READ, (xdrproc_t)xdr_u_int, (char *)&len,
				       (xdrproc_t)xdr_data, (char *)&t->res, tmo);
			break;
		default:
			st = clnt_call(t->cl, PERF_NULL, (xdrproc_t)xdr_nothing, NULL,
				       (xdrproc_t)xdr_nothing, NULL, tmo);
			break;
		}
		t1 = rte_rdtsc();
		if (st != RPC_SUCCESS) {
			thread_error(t, false, "%s %u bytes: clnt_call: %s",
				     perf_proc_name(pt->proc), pt->size, clnt_sperrno(st));
			if (t->errors >= THREAD_ERR_LIMIT)
				break;
			continue;
		}
		ph = __atomic_load_n(&run->phase, __ATOMIC_ACQUIRE);
		counted = ph != PHASE_WARM && t1 >= run->t_start &&
			  (ph == PHASE_COUNT || t1 <= run->t_end);
		if (counted) {
			__atomic_store_n(&t->calls, t->calls + 1, __ATOMIC_RELAXED);
			if (pt->proc != PERF_NULL)
				__atomic_store_n(&t->bytes, t->bytes + pt->size, __ATOMIC_RELAXED);
			if (t->hist != NULL)
				perf_hist_add(t->hist, t1 - t0);
		}
		if (pt->proc == PERF_WRITE && count != pt->size)
			thread_error(t, true, "WRITE %u bytes: the server counted %u", pt->size,
				     count);
		if (run->c->verify) {
			uint64_t v0 = rte_rdtsc();

			thread_verify(t);
			if (counted)
				t->verify_tsc += rte_rdtsc() - v0;
		}
	}
	__atomic_store_n(&t->exited, 1, __ATOMIC_RELEASE);
	return NULL;
}

static CLIENT *
client_new(const struct perf_conf *c, uint16_t port, char *err, size_t errlen)
{
	struct sockaddr_in sin;
	struct netbuf nb;
	CLIENT *cl;
	int fd, one = 1;

	if (resolve(c->tirpc_host, port, &sin) != 0) {
		snprintf(err, errlen, "cannot resolve %s", c->tirpc_host);
		return NULL;
	}
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) != 0 ||
	    connect(fd, (struct sockaddr *)&sin, sizeof(sin)) != 0) {
		snprintf(err, errlen, "connect to %s:%u: %s", c->tirpc_host, port, strerror(errno));
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	nb.maxlen = nb.len = sizeof(sin);
	nb.buf = &sin;
	cl = clnt_vc_create(fd, &nb, PERF_PROG, PERF_VERS, 0, 0);
	if (cl == NULL) {
		snprintf(err, errlen, "%s", clnt_spcreateerror("clnt_vc_create"));
		close(fd);
		return NULL;
	}
	clnt_control(cl, CLSET_FD_CLOSE, NULL);
	return cl;
}

static int
thread_buffers(struct tthread *t, uint32_t size, uint64_t *state)
{
	uint32_t i;

	t->arg.buf = malloc(size != 0 ? size : 1);
	t->res.buf = malloc(size != 0 ? size : 1);
	if (t->arg.buf == NULL || t->res.buf == NULL)
		return -ENOMEM;
	t->arg.cap = t->arg.len = size;
	t->res.cap = size;
	for (i = 0; i < size; i++) {
		*state ^= *state << 13;
		*state ^= *state >> 7;
		*state ^= *state << 17;
		t->arg.buf[i] = (uint8_t)(*state >> 24);
	}
	memset(t->res.buf, 0xee, size);
	return 0;
}

int
perf_tirpc_run(const struct perf_conf *c, uint16_t port, struct perf_point *pt)
{
	struct perf_result *r = &pt->res[PERF_IMPL_TIRPC];
	uint32_t n = pt->conns * pt->depth, i, running;
	uint64_t hz = rte_get_tsc_hz(), now, end, give_up, calls, bytes, verify_tsc = 0;
	uint64_t state = 0x9e3779b97f4a7c15ull;
	static uint8_t *pattern;
	struct perf_hist *hist = NULL;
	struct tthread *th;
	struct trun run;

	memset(r, 0, sizeof(*r));
	r->run = true;
	r->threads = n;
	if (pattern == NULL) {
		pattern = malloc(65536);
		if (pattern == NULL) {
			perf_result_error(r, false, "out of memory");
			return -1;
		}
		for (i = 0; i < 65536; i++)
			pattern[i] = perf_pattern_byte(i);
	}
	memset(&run, 0, sizeof(run));
	run.c = c;
	run.pt = pt;
	run.pattern = pattern;
	th = calloc(n, sizeof(*th));
	if (th == NULL) {
		perf_result_error(r, false, "out of memory");
		return -1;
	}
	for (i = 0; i < n; i++) {
		th[i].run = &run;
		th[i].cl = client_new(c, port, r->first_error, sizeof(r->first_error));
		if (th[i].cl == NULL) {
			r->errors++;
			goto out;
		}
		if (pt->proc != PERF_NULL && thread_buffers(&th[i], pt->size, &state) != 0) {
			perf_result_error(r, false, "out of memory for %u-byte buffers", pt->size);
			goto out;
		}
		if (pt->mode == PERF_MODE_LAT) {
			th[i].hist = malloc(sizeof(*th[i].hist));
			if (th[i].hist == NULL) {
				perf_result_error(r, false, "out of memory");
				goto out;
			}
			perf_hist_reset(th[i].hist);
		}
	}
	pthread_barrier_init(&run.go, NULL, n + 1);
	for (i = 0; i < n; i++) {
		if (pthread_create(&th[i].tid, NULL, thread_main, &th[i]) != 0) {
			/* The barrier cannot be released: the process cannot go on. */
			fprintf(stderr, "rpcr-perf: cannot start client thread %u of %u\n", i, n);
			exit(1);
		}
		th[i].started = true;
	}
	pthread_barrier_wait(&run.go);
	now = rte_rdtsc();
	end = now + (uint64_t)(c->warmup * (double)hz);
	while (rte_rdtsc() < end && perf_running)
		usleep(2000);
	run.t_start = rte_rdtsc();
	__atomic_store_n(&run.phase, PHASE_COUNT, __ATOMIC_RELEASE);
	end = run.t_start + (uint64_t)(c->seconds * (double)hz);
	give_up = end + (uint64_t)(POINT_OVERRUN_S * (double)hz);
	for (;;) {
		usleep(5000);
		now = rte_rdtsc();
		calls = bytes = 0;
		running = 0;
		for (i = 0; i < n; i++) {
			calls += __atomic_load_n(&th[i].calls, __ATOMIC_RELAXED);
			bytes += __atomic_load_n(&th[i].bytes, __ATOMIC_RELAXED);
			running += !__atomic_load_n(&th[i].exited, __ATOMIC_ACQUIRE);
		}
		perf_progress(c, pt, PERF_IMPL_TIRPC, calls, bytes,
			      (double)(now - run.t_start) / (double)hz, 0);
		if ((now >= end && calls >= PERF_MIN_CALLS) || now >= give_up || running == 0)
			break;
		if (!perf_running)
			break;
	}
	run.t_end = rte_rdtsc();
	__atomic_store_n(&run.phase, PHASE_STOP, __ATOMIC_RELEASE);
	if (pt->mode == PERF_MODE_LAT) {
		hist = malloc(sizeof(*hist));
		if (hist != NULL)
			perf_hist_reset(hist);
	}
	for (i = 0; i < n; i++) {
		pthread_join(th[i].tid, NULL);
		th[i].started = false;
		r->calls += th[i].calls;
		r->bytes += th[i].bytes;
		r->errors += th[i].errors;
		r->verify_errors += th[i].verify_errors;
		verify_tsc += th[i].verify_tsc;
		if (r->first_error[0] == '\0' && th[i].err[0] != '\0')
			snprintf(r->first_error, sizeof(r->first_error), "%s", th[i].err);
		if (hist != NULL && th[i].hist != NULL)
			perf_hist_merge(hist, th[i].hist);
	}
	pthread_barrier_destroy(&run.go);
	r->seconds = (double)(run.t_end - run.t_start) / (double)hz;
	/* One call at a time: checking results is not transfer time (as on the rpcr side). */
	if (n == 1)
		r->seconds -= (double)verify_tsc / (double)hz;
	if (r->seconds < 0)
		r->seconds = 0;
	if (hist != NULL && hist->n != 0) {
		r->has_lat = true;
		perf_hist_lat(hist, hz, &r->lat);
	}
out:
	for (i = 0; i < n; i++) {
		if (th[i].cl != NULL)
			clnt_destroy(th[i].cl);
		free(th[i].arg.buf);
		free(th[i].res.buf);
		free(th[i].hist);
	}
	free(th);
	free(hist);
	return 0;
}

#endif /* RPCR_PERF_HAVE_TIRPC */
