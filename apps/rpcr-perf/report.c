/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/*
 * What rpcr-perf shows: a one-line progress display while it measures (a terminal only), the
 * final table with rpcr and the baseline side by side, and the JSON file with every figure and
 * the whole configuration.
 */

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>
#include <time.h>

#include <rpcr_xprt.h>

#include "perf.h"

#ifndef RPCR_PERF_VERSION
#define RPCR_PERF_VERSION "unknown"
#endif

const char *const perf_impl_name[PERF_IMPL_NUM] = {"rpcr", "tirpc"};

volatile int perf_running = 1;

static bool progress_shown;

double
perf_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

const char *
perf_proc_name(uint32_t proc)
{
	static const char *const names[] = {"NULL", "ECHO", "WRITE", "READ", "CALLBACK"};

	return proc < sizeof(names) / sizeof(names[0]) ? names[proc] : "?";
}

const char *
perf_mode_name(unsigned int mode)
{
	switch (mode) {
	case PERF_MODE_LAT:
		return "lat";
	case PERF_MODE_BW:
		return "bw";
	case PERF_MODE_RATE:
		return "rate";
	case PERF_MODE_CB:
		return "callback";
	default:
		return "?";
	}
}

const char *
perf_size_str(uint32_t size, char *buf, size_t len)
{
	if (size != 0 && size % (1u << 20) == 0)
		snprintf(buf, len, "%uM", size >> 20);
	else if (size != 0 && size % 1024 == 0)
		snprintf(buf, len, "%uK", size >> 10);
	else
		snprintf(buf, len, "%u", size);
	return buf;
}

void
perf_result_error(struct perf_result *r, bool verify, const char *fmt, ...)
{
	va_list ap;

	if (verify)
		r->verify_errors++;
	else
		r->errors++;
	if (r->first_error[0] != '\0')
		return;
	va_start(ap, fmt);
	vsnprintf(r->first_error, sizeof(r->first_error), fmt, ap);
	va_end(ap);
}

/* "ECHO 64K", "NULL", "4 conns x 16": the point in a few words. */
static const char *
point_str(const struct perf_point *pt, char *buf, size_t len)
{
	char sz[16];

	if (pt->mode == PERF_MODE_RATE)
		snprintf(buf, len, "NULL %u conn x %u", pt->conns, pt->depth);
	else if (pt->mode == PERF_MODE_CB)
		snprintf(buf, len, "CALLBACK x %u", pt->depth);
	else if (pt->proc == PERF_NULL)
		snprintf(buf, len, "NULL");
	else
		snprintf(buf, len, "%s %s", perf_proc_name(pt->proc),
			 perf_size_str(pt->size, sz, sizeof(sz)));
	return buf;
}

/* 3.51M, 11.2k, 950 */
static const char *
rate_str(double v, char *buf, size_t len)
{
	if (v >= 1e6)
		snprintf(buf, len, "%.2fM", v / 1e6);
	else if (v >= 1e3)
		snprintf(buf, len, "%.1fk", v / 1e3);
	else
		snprintf(buf, len, "%.0f", v);
	return buf;
}

static double
calls_per_s(const struct perf_result *r)
{
	return r->seconds > 0 ? (double)r->calls / r->seconds : 0;
}

static double
bytes_per_s(const struct perf_result *r)
{
	return r->seconds > 0 ? (double)r->bytes / r->seconds : 0;
}

void
perf_progress(const struct perf_conf *c, const struct perf_point *pt, int impl, uint64_t calls,
	      uint64_t bytes, double seconds, uint64_t errors)
{
	static double last;
	double now = perf_now(), cps = seconds > 0 ? (double)calls / seconds : 0;
	char what[48], r[16];

	if (!c->tty || c->quiet || now - last < 0.1)
		return;
	last = now;
	printf("\r\033[K  %-5s %-4s %-18s %9s calls/s", perf_impl_name[impl],
	       perf_mode_name(pt->mode), point_str(pt, what, sizeof(what)),
	       rate_str(cps, r, sizeof(r)));
	if (pt->mode == PERF_MODE_BW)
		printf("  %8.3f GB/s", seconds > 0 ? (double)bytes / seconds / 1e9 : 0);
	printf("  %" PRIu64 " calls", calls);
	if (errors != 0)
		printf("  %" PRIu64 " errors", errors);
	fflush(stdout);
	progress_shown = true;
}

void
perf_progress_clear(void)
{
	if (!progress_shown)
		return;
	printf("\r\033[K");
	fflush(stdout);
	progress_shown = false;
}

void
perf_totals(const struct perf_point *pts, uint32_t npts, uint64_t *errors, uint64_t *verify_errors)
{
	uint32_t i;
	int k;

	*errors = 0;
	*verify_errors = 0;
	for (i = 0; i < npts; i++) {
		for (k = 0; k < PERF_IMPL_NUM; k++) {
			*errors += pts[i].res[k].errors;
			*verify_errors += pts[i].res[k].verify_errors;
		}
	}
}

double
perf_result_figure(unsigned int mode, const struct perf_result *r)
{
	if (mode == PERF_MODE_LAT)
		return r->has_lat ? r->lat.p50 : 0;
	return calls_per_s(r);
}

double
perf_ratio(unsigned int mode, const struct perf_result *a, const struct perf_result *b)
{
	double x = perf_result_figure(mode, a), y = perf_result_figure(mode, b);

	if (!a->run || !b->run || x <= 0 || y <= 0)
		return 0;
	return mode == PERF_MODE_LAT ? y / x : x / y;
}

/* The point's ratio: the median of its runs' (main.c). */
static double
point_ratio(const struct perf_point *pt)
{
	return pt->ratio;
}

static const char *
ratio_str(double v, char *buf, size_t len)
{
	if (v <= 0)
		snprintf(buf, len, "-");
	else if (v >= 100)
		snprintf(buf, len, "%.0fx", v);
	else
		snprintf(buf, len, "%.1fx", v);
	return buf;
}

static bool
has_mode(const struct perf_point *pts, uint32_t npts, unsigned int mode)
{
	uint32_t i;

	for (i = 0; i < npts; i++)
		if (pts[i].mode == mode)
			return true;
	return false;
}

static void
print_lat(FILE *f, const struct perf_conf *c, const struct perf_point *pts, uint32_t npts)
{
	uint32_t i;
	int k;

	fprintf(f, "\nLatency: one call at a time, round trip in microseconds\n");
	fprintf(f, "%-5s %5s  %-5s %10s %8s %8s %8s %8s %8s %9s  %s\n", "call", "size", "impl",
		"calls", "min", "p50", "p90", "p99", "p99.9", "max", "p50 ratio");
	for (i = 0; i < npts; i++) {
		const struct perf_point *pt = &pts[i];
		char sz[16], rb[16];

		if (pt->mode != PERF_MODE_LAT)
			continue;
		for (k = 0; k < PERF_IMPL_NUM; k++) {
			const struct perf_result *r = &pt->res[k];

			if (k == PERF_IMPL_TIRPC && !c->baseline)
				continue;
			if (k == 0)
				fprintf(f, "%-5s %5s  ", perf_proc_name(pt->proc),
					perf_size_str(pt->size, sz, sizeof(sz)));
			else
				fprintf(f, "%-5s %5s  ", "", "");
			if (!r->has_lat) {
				fprintf(f, "%-5s %10s  (%s)\n", perf_impl_name[k], "-",
					r->first_error[0] != '\0' ? r->first_error : "not run");
				continue;
			}
			fprintf(f, "%-5s %10" PRIu64 " %8.2f %8.2f %8.2f %8.2f %8.2f %9.2f",
				perf_impl_name[k], r->calls, r->lat.min, r->lat.p50, r->lat.p90,
				r->lat.p99, r->lat.p999, r->lat.max);
			if (k == PERF_IMPL_TIRPC)
				fprintf(f, "  %s", ratio_str(point_ratio(pt), rb, sizeof(rb)));
			fprintf(f, "\n");
		}
	}
}

static void
print_bw(FILE *f, const struct perf_conf *c, const struct perf_point *pts, uint32_t npts)
{
	uint32_t i;

	fprintf(f,
		"\nBandwidth: %u call%s outstanding, one connection; data bytes per second one way "
		"(ECHO carries them both ways)\n",
		c->bw_outstanding, c->bw_outstanding == 1 ? "" : "s");
	fprintf(f, "%-5s %5s  %-6s %12s %10s %12s %10s %8s\n", "call", "size", "data", "rpcr GB/s",
		"calls/s", "tirpc GB/s", "calls/s", "ratio");
	for (i = 0; i < npts; i++) {
		const struct perf_point *pt = &pts[i];
		const struct perf_result *a = &pt->res[PERF_IMPL_RPCR],
					 *b = &pt->res[PERF_IMPL_TIRPC];
		char sz[16], r1[16], r2[16], rb[16];

		if (pt->mode != PERF_MODE_BW)
			continue;
		fprintf(f, "%-5s %5s  %-6s ", perf_proc_name(pt->proc),
			perf_size_str(pt->size, sz, sizeof(sz)),
			pt->size >= c->threshold ? "chunk" : "inline");
		if (a->run && a->calls != 0)
			fprintf(f, "%12.3f %10s", bytes_per_s(a) / 1e9,
				rate_str(calls_per_s(a), r1, sizeof(r1)));
		else
			fprintf(f, "%12s %10s", "-", "-");
		if (b->run && b->calls != 0)
			fprintf(f, " %12.3f %10s %8s\n", bytes_per_s(b) / 1e9,
				rate_str(calls_per_s(b), r2, sizeof(r2)),
				ratio_str(point_ratio(pt), rb, sizeof(rb)));
		else
			fprintf(f, " %12s %10s %8s\n", "-", "-", "-");
	}
}

static void
print_rate(FILE *f, const struct perf_point *pts, uint32_t npts)
{
	uint32_t i;

	fprintf(f,
		"\nCall rate: NULL calls per second. rpcr: every connection on one client lcore; "
		"tirpc (synchronous):\none thread and one connection per outstanding call\n");
	fprintf(f, "%5s %10s %6s %13s %8s %13s %8s\n", "conns", "outst/conn", "total",
		"rpcr calls/s", "threads", "tirpc calls/s", "ratio");
	for (i = 0; i < npts; i++) {
		const struct perf_point *pt = &pts[i];
		const struct perf_result *a = &pt->res[PERF_IMPL_RPCR],
					 *b = &pt->res[PERF_IMPL_TIRPC];
		char r1[16], r2[16], rb[16];

		if (pt->mode != PERF_MODE_RATE)
			continue;
		fprintf(f, "%5u %10u %6u %13s", pt->conns, pt->depth, pt->conns * pt->depth,
			a->run && a->calls != 0 ? rate_str(calls_per_s(a), r1, sizeof(r1)) : "-");
		if (b->run && b->calls != 0)
			fprintf(f, " %8u %13s %8s\n", b->threads,
				rate_str(calls_per_s(b), r2, sizeof(r2)),
				ratio_str(point_ratio(pt), rb, sizeof(rb)));
		else
			fprintf(f, " %8s %13s %8s\n", "-", "-", "-");
	}
}

static void
print_cb(FILE *f, const struct perf_point *pts, uint32_t npts)
{
	const struct perf_point *null_lat = NULL;
	uint32_t i;

	for (i = 0; i < npts; i++)
		if (pts[i].mode == PERF_MODE_LAT && pts[i].proc == PERF_NULL &&
		    pts[i].res[PERF_IMPL_RPCR].has_lat)
			null_lat = &pts[i];
	fprintf(f,
		"\nReverse direction (RFC 8167): CALLBACK calls on one connection, each answered "
		"after "
		"the server\nhas called this client back once over it (rpcr only: libtirpc has no "
		"reverse direction)\n");
	fprintf(f, "%10s %13s %9s %9s %9s\n", "outstanding", "CALLBACK/s", "p50 us", "p99 us",
		"max us");
	for (i = 0; i < npts; i++) {
		const struct perf_point *pt = &pts[i];
		const struct perf_result *a = &pt->res[PERF_IMPL_RPCR];
		char r1[16];

		if (pt->mode != PERF_MODE_CB)
			continue;
		fprintf(f, "%10u %13s", pt->depth,
			a->run && a->calls != 0 ? rate_str(calls_per_s(a), r1, sizeof(r1)) : "-");
		if (a->has_lat)
			fprintf(f, " %9.2f %9.2f %9.2f\n", a->lat.p50, a->lat.p99, a->lat.max);
		else
			fprintf(f, " %9s %9s %9s\n", "-", "-", "-");
	}
	if (null_lat != NULL)
		fprintf(f,
			"(a forward NULL call's p50 in this run: %.2f us; a CALLBACK is a forward "
			"call and a reverse one)\n",
			null_lat->res[PERF_IMPL_RPCR].lat.p50);
}

void
perf_report_print(FILE *f, const struct perf_conf *c, const struct perf_point *pts, uint32_t npts,
		  double elapsed)
{
	uint64_t e[PERF_IMPL_NUM] = {0}, v[PERF_IMPL_NUM] = {0};
	uint32_t i;
	int k;

	if (c->role == PERF_ROLE_LOOPBACK)
		fprintf(f,
			"rpcr-perf %s: loopback on one host: rpcr over %s (client lcore %d, server "
			"lcore %d)",
			RPCR_PERF_VERSION, c->devargs, c->client_lcore, c->server_lcore);
	else
		fprintf(f, "rpcr-perf %s: rpcr over %s to %s", RPCR_PERF_VERSION, c->devargs,
			c->addr);
	if (c->baseline)
		fprintf(f, "; baseline libtirpc over TCP %s%s\n", c->tirpc_host,
			c->role == PERF_ROLE_LOOPBACK ? " (the same two CPUs)" : "");
	else
		fprintf(f, "; no baseline\n");
	fprintf(f, "%.2f s per point after %.2f s warm-up", c->seconds, c->warmup);
	if (c->repeat > 1)
		fprintf(f, ", median of %u runs", c->repeat);
	fprintf(f,
		"; RPC-over-RDMA version %u%s, DDP threshold %u B, inline %u B%s%s%s; %s; %.1f s "
		"in all\n",
		c->rdma_vers,
		c->rdma_vers != 2 || c->cont_max == 0 ? ""
		: c->cont_max == RPCR_XPRT_NO_CONT    ? " (no continuation)"
						      : " (continuation up to the --cont-max)",
		c->threshold, c->inline_size, c->reg_per_call ? ", chunks registered per call" : "",
		c->poll_mode != RPCR_XPRT_POLL_BUSY ? ", pollers " : "",
		c->poll_mode != RPCR_XPRT_POLL_BUSY
			? rpcr_xprt_poll_mode_name((enum rpcr_xprt_poll_mode)c->poll_mode)
			: "",
		c->verify ? "every result verified" : "results NOT verified", elapsed);
	if (has_mode(pts, npts, PERF_MODE_LAT))
		print_lat(f, c, pts, npts);
	if (has_mode(pts, npts, PERF_MODE_BW))
		print_bw(f, c, pts, npts);
	if (has_mode(pts, npts, PERF_MODE_RATE))
		print_rate(f, pts, npts);
	if (has_mode(pts, npts, PERF_MODE_CB))
		print_cb(f, pts, npts);
	for (i = 0; i < npts; i++) {
		for (k = 0; k < PERF_IMPL_NUM; k++) {
			e[k] += pts[i].res[k].errors;
			v[k] += pts[i].res[k].verify_errors;
		}
	}
	fprintf(f, "\nErrors: rpcr %" PRIu64 " failed calls, %" PRIu64 " wrong results", e[0],
		v[0]);
	if (c->baseline)
		fprintf(f, "; tirpc %" PRIu64 " failed calls, %" PRIu64 " wrong results", e[1],
			v[1]);
	fprintf(f, "\n");
	for (i = 0; i < npts; i++) {
		for (k = 0; k < PERF_IMPL_NUM; k++) {
			const struct perf_result *r = &pts[i].res[k];
			char what[48];

			if (r->errors + r->verify_errors == 0)
				continue;
			fprintf(stderr,
				"rpcr-perf: %s %s %s: %" PRIu64 " failed calls, %" PRIu64
				" wrong results; first: %s\n",
				perf_impl_name[k], perf_mode_name(pts[i].mode),
				point_str(&pts[i], what, sizeof(what)), r->errors, r->verify_errors,
				r->first_error);
		}
	}
}

/* ---- JSON ---- */

static void
json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s != '\0'; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
}

static void
json_num(FILE *f, double v)
{
	if (!isfinite(v))
		v = 0;
	fprintf(f, "%.9g", v);
}

static void
json_u32_list(FILE *f, const uint32_t *v, uint32_t n)
{
	uint32_t i;

	fputc('[', f);
	for (i = 0; i < n; i++)
		fprintf(f, "%s%u", i != 0 ? ", " : "", v[i]);
	fputc(']', f);
}

static void
json_result(FILE *f, const struct perf_point *pt, int impl)
{
	const struct perf_result *r = &pt->res[impl];
	uint32_t i;

	if (!r->run) {
		fprintf(f, "null");
		return;
	}
	fprintf(f, "{\"calls\": %" PRIu64 ", \"seconds\": ", r->calls);
	json_num(f, r->seconds);
	fprintf(f, ", \"calls_per_s\": ");
	json_num(f, calls_per_s(r));
	fprintf(f, ", \"bytes\": %" PRIu64 ", \"bytes_per_s\": ", r->bytes);
	json_num(f, bytes_per_s(r));
	fprintf(f, ", \"errors\": %" PRIu64 ", \"verify_errors\": %" PRIu64, r->errors,
		r->verify_errors);
	if (impl == PERF_IMPL_TIRPC)
		fprintf(f, ", \"threads\": %u", r->threads);
	if (r->has_lat) {
		fprintf(f, ", \"latency_us\": {\"min\": ");
		json_num(f, r->lat.min);
		fprintf(f, ", \"p50\": ");
		json_num(f, r->lat.p50);
		fprintf(f, ", \"p90\": ");
		json_num(f, r->lat.p90);
		fprintf(f, ", \"p99\": ");
		json_num(f, r->lat.p99);
		fprintf(f, ", \"p99.9\": ");
		json_num(f, r->lat.p999);
		fprintf(f, ", \"max\": ");
		json_num(f, r->lat.max);
		fprintf(f, ", \"mean\": ");
		json_num(f, r->lat.mean);
		fprintf(f, "}, \"cdf\": [");
		for (i = 0; i < PERF_CDF_POINTS; i++) {
			fprintf(f, "%s[", i != 0 ? ", " : "");
			json_num(f, r->lat.cdf[i]);
			fprintf(f, ", ");
			json_num(f, perf_cdf_q[i]);
			fprintf(f, "]");
		}
		fprintf(f, "]");
	}
	if (r->first_error[0] != '\0') {
		fprintf(f, ", \"first_error\": ");
		json_str(f, r->first_error);
	}
	fprintf(f, "}");
}

static void
json_list(FILE *f, const double *v, uint32_t n)
{
	uint32_t i;

	fputc('[', f);
	for (i = 0; i < n; i++) {
		if (i != 0)
			fprintf(f, ", ");
		json_num(f, v[i]);
	}
	fputc(']', f);
}

/* Every run's figure, for --repeat. */
static void
json_runs(FILE *f, const struct perf_point *pt)
{
	fprintf(f, ",\n     \"runs\": {\"figure\": \"%s\", \"rpcr\": ",
		pt->mode == PERF_MODE_LAT ? "p50_us" : "calls_per_s");
	json_list(f, pt->runs[PERF_IMPL_RPCR], pt->nruns);
	fprintf(f, ", \"tirpc\": ");
	if (pt->res[PERF_IMPL_TIRPC].run)
		json_list(f, pt->runs[PERF_IMPL_TIRPC], pt->nruns);
	else
		fprintf(f, "null");
	fprintf(f, ", \"ratio\": ");
	if (pt->res[PERF_IMPL_TIRPC].run)
		json_list(f, pt->run_ratios, pt->nruns);
	else
		fprintf(f, "null");
	fprintf(f, "}");
}

static void
json_points(FILE *f, const struct perf_conf *c, const struct perf_point *pts, uint32_t npts,
	    unsigned int mode)
{
	bool first = true;
	uint32_t i;

	fprintf(f, "[");
	for (i = 0; i < npts; i++) {
		const struct perf_point *pt = &pts[i];
		double ratio = point_ratio(pt);

		if (pt->mode != mode)
			continue;
		fprintf(f, "%s\n    {\"proc\": \"%s\", \"size\": %u", first ? "" : ",",
			perf_proc_name(pt->proc), pt->size);
		first = false;
		if (mode == PERF_MODE_BW)
			fprintf(f, ", \"placement\": \"%s\"",
				pt->size >= c->threshold ? "chunk" : "inline");
		fprintf(f,
			", \"connections\": %u, \"outstanding_per_connection\": %u, "
			"\"outstanding\": %u,\n     \"rpcr\": ",
			pt->conns, pt->depth, pt->conns * pt->depth);
		json_result(f, pt, PERF_IMPL_RPCR);
		fprintf(f, ",\n     \"tirpc\": ");
		json_result(f, pt, PERF_IMPL_TIRPC);
		fprintf(f, ",\n     \"ratio\": ");
		if (ratio > 0)
			json_num(f, ratio);
		else
			fprintf(f, "null");
		json_runs(f, pt);
		fprintf(f, "}");
	}
	fprintf(f, "%s]", first ? "" : "\n  ");
}

int
perf_json_write(const char *path, const struct perf_conf *c, const struct perf_point *pts,
		uint32_t npts, const struct perf_srv_stats *srv, const struct perf_clnt_stats *cli,
		double elapsed, bool complete)
{
	static const char *const roles[] = {"none", "loopback", "server", "client"};
	uint64_t e[PERF_IMPL_NUM] = {0}, v[PERF_IMPL_NUM] = {0}, all_e, all_v;
	FILE *f = fopen(path, "w");
	uint32_t i;
	int k, rc;

	if (f == NULL) {
		fprintf(stderr, "rpcr-perf: %s: %s\n", path, strerror(errno));
		return -1;
	}
	for (i = 0; i < npts; i++) {
		for (k = 0; k < PERF_IMPL_NUM; k++) {
			e[k] += pts[i].res[k].errors;
			v[k] += pts[i].res[k].verify_errors;
		}
	}
	perf_totals(pts, npts, &all_e, &all_v);
	fprintf(f, "{\n  \"program\": \"rpcr-perf\",\n  \"version\": ");
	json_str(f, RPCR_PERF_VERSION);
	fprintf(f, ",\n  \"complete\": %s,\n", complete ? "true" : "false");
	fprintf(f, "  \"config\": {\n    \"role\": \"%s\",\n    \"modes\": [", roles[c->role]);
	for (k = 0, i = 0; k < 4; k++) {
		unsigned int m = 1u << k;

		if (c->modes & m)
			fprintf(f, "%s\"%s\"", i++ != 0 ? ", " : "", perf_mode_name(m));
	}
	fprintf(f, "],\n    \"device\": ");
	json_str(f, c->devargs);
	fprintf(f, ",\n    \"address\": ");
	json_str(f, c->addr);
	fprintf(f, ",\n    \"seconds\": ");
	json_num(f, c->seconds);
	fprintf(f, ",\n    \"warmup_seconds\": ");
	json_num(f, c->warmup);
	fprintf(f, ",\n    \"repeat\": %u", c->repeat);
	fprintf(f, ",\n    \"lat_sizes\": ");
	json_u32_list(f, c->lat_sizes, c->nlat_sizes);
	fprintf(f, ",\n    \"sizes\": ");
	json_u32_list(f, c->sizes, c->nsizes);
	fprintf(f, ",\n    \"procs\": [");
	for (i = 0; i < c->nprocs; i++)
		fprintf(f, "%s\"%s\"", i != 0 ? ", " : "", perf_proc_name(c->procs[i]));
	fprintf(f, "],\n    \"outstanding\": ");
	json_u32_list(f, c->outstanding, c->noutstanding);
	fprintf(f, ",\n    \"connections\": ");
	json_u32_list(f, c->conns, c->nconns);
	fprintf(f,
		",\n    \"bw_outstanding\": %u,\n    \"threshold\": %u,\n    \"inline\": %u,\n    "
		"\"server_credits\": %u,\n    \"verify\": %s,\n    \"reg_per_call\": %s,\n    "
		"\"rdma_version\": %u,\n    \"cont_max\": %u,\n    \"poll_mode\": \"%s\",\n    "
		"\"baseline\": %s,\n",
		c->bw_outstanding, c->threshold, c->inline_size, c->credits,
		c->verify ? "true" : "false", c->reg_per_call ? "true" : "false", c->rdma_vers,
		c->cont_max, rpcr_xprt_poll_mode_name((enum rpcr_xprt_poll_mode)c->poll_mode),
		c->baseline ? "\"tirpc\"" : "null");
	fprintf(f, "    \"tirpc\": ");
	if (c->baseline) {
		fprintf(f, "{\"host\": ");
		json_str(f, c->tirpc_host);
		fprintf(f, ", \"port\": %u, \"transport\": \"tcp\", \"api\": \"clnt_vc_create\"}",
			c->tirpc_port);
	} else {
		fprintf(f, "null");
	}
	fprintf(f, ",\n    \"client_lcore\": %d,\n    \"server_lcore\": %d,\n    \"eal_args\": [",
		c->client_lcore, c->server_lcore);
	for (k = 0; k < c->eal_argc; k++) {
		fprintf(f, "%s", k != 0 ? ", " : "");
		json_str(f, c->eal_argv[k]);
	}
	fprintf(f, "]\n  },\n  \"lat\": ");
	json_points(f, c, pts, npts, PERF_MODE_LAT);
	fprintf(f, ",\n  \"bw\": ");
	json_points(f, c, pts, npts, PERF_MODE_BW);
	fprintf(f, ",\n  \"rate\": ");
	json_points(f, c, pts, npts, PERF_MODE_RATE);
	fprintf(f, ",\n  \"callback\": ");
	json_points(f, c, pts, npts, PERF_MODE_CB);
	fprintf(f,
		",\n  \"errors\": {\"rpcr\": {\"calls\": %" PRIu64 ", \"verify\": %" PRIu64
		"}, \"tirpc\": {\"calls\": %" PRIu64 ", \"verify\": %" PRIu64
		"}, \"total\": %" PRIu64 "},\n",
		e[0], v[0], e[1], v[1], all_e + all_v);
	fprintf(f, "  \"verified\": %s,\n",
		c->verify && complete && all_e + all_v == 0 ? "true" : "false");
	fprintf(f, "  \"server\": ");
	if (srv != NULL && srv->valid)
		fprintf(f,
			"{\"calls_recv\": %" PRIu64 ", \"replies_sent\": %" PRIu64
			", \"bytes_sent\": %" PRIu64 ", \"bytes_recv\": %" PRIu64
			", \"rdma_errors_sent\": %" PRIu64 ", \"wc_errors\": %" PRIu64
			", \"bad_headers\": %" PRIu64 ", \"overruns\": %" PRIu64 "}",
			srv->calls_recv, srv->replies_sent, srv->bytes_sent, srv->bytes_recv,
			srv->rdma_errors_sent, srv->wc_errors, srv->bad_headers, srv->overruns);
	else
		fprintf(f, "null");
	fprintf(f, ",\n  \"client\": ");
	if (cli != NULL && cli->valid)
		fprintf(f,
			"{\"calls_sent\": %" PRIu64 ", \"replies_recv\": %" PRIu64
			", \"credit_waits\": %" PRIu64 ", \"retransmits\": %" PRIu64
			", \"reconnects\": %" PRIu64 ", \"timeouts\": %" PRIu64
			", \"wc_errors\": %" PRIu64 ", \"rdma_errors_recv\": %" PRIu64
			", \"unmatched\": %" PRIu64 ", \"bad_headers\": %" PRIu64 "}",
			cli->calls_sent, cli->replies_recv, cli->credit_waits, cli->retransmits,
			cli->reconnects, cli->timeouts, cli->wc_errors, cli->rdma_errors_recv,
			cli->unmatched, cli->bad_headers);
	else
		fprintf(f, "null");
	fprintf(f, ",\n  \"elapsed_seconds\": ");
	json_num(f, elapsed);
	fprintf(f, "\n}\n");
	rc = ferror(f) ? -1 : 0;
	if (fclose(f) != 0)
		rc = -1;
	if (rc != 0)
		fprintf(stderr, "rpcr-perf: writing %s failed\n", path);
	return rc;
}
