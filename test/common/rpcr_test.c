/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

#include "rpcr_test.h"

unsigned long rpcr_test_checks;
unsigned long rpcr_test_failed;

void
rpcr_test_hexdiff(const uint8_t *a, const uint8_t *b, size_t n)
{
	size_t i, j;

	for (i = 0; i < n; i += 4) {
		bool diff = false;

		fprintf(stderr, "  %4zu: ", i);
		for (j = i; j < i + 4 && j < n; j++) {
			fprintf(stderr, "%02x", a[j]);
			diff |= a[j] != b[j];
		}
		fprintf(stderr, "  ");
		for (j = i; j < i + 4 && j < n; j++)
			fprintf(stderr, "%02x", b[j]);
		fprintf(stderr, "%s\n", diff ? "  <--" : "");
	}
}

uint64_t
rpcr_test_seed(void)
{
	const char *s = getenv("RPCR_TEST_SEED");

	return s != NULL ? strtoull(s, NULL, 0) : 0x72706372u;
}

unsigned long
rpcr_test_iters(unsigned long dflt)
{
	const char *s = getenv("RPCR_TEST_ITERS");

	return s != NULL ? strtoul(s, NULL, 0) : dflt;
}

int
rpcr_test_main(int argc, char **argv, const struct rpcr_test_case *cases, size_t n)
{
	unsigned long cases_failed = 0, cases_run = 0;
	size_t i;
	int a;

	for (i = 0; i < n; i++) {
		unsigned long before = rpcr_test_failed;
		bool selected = argc < 2;

		for (a = 1; a < argc; a++)
			selected |= strcmp(argv[a], cases[i].name) == 0;
		if (!selected)
			continue;
		cases[i].fn();
		cases_run++;
		if (rpcr_test_failed != before) {
			cases_failed++;
			printf("FAIL %s (%lu failed checks)\n", cases[i].name,
			       rpcr_test_failed - before);
		} else {
			printf("ok   %s\n", cases[i].name);
		}
		fflush(stdout);
	}
	printf("%lu case(s), %lu check(s), %lu failed case(s), seed 0x%" PRIx64 "\n", cases_run,
	       rpcr_test_checks, cases_failed, rpcr_test_seed());
	if (cases_run == 0) {
		fprintf(stderr, "no test case matched\n");
		return 1;
	}
	return cases_failed != 0 ? 1 : 0;
}
