/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The rpcr authors
 */

/* Write every golden message to DIR/<family>/<name>: the fuzzers' seed corpus. */

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "golden.h"

int
main(int argc, char **argv)
{
	char path[4096];
	size_t i;
	int f;

	if (argc != 2) {
		fprintf(stderr, "usage: gen_corpus DIR\n");
		return 2;
	}
	if (mkdir(argv[1], 0755) != 0 && errno != EEXIST) {
		perror(argv[1]);
		return 1;
	}
	for (f = 0; f < RPCR_GOLDEN_NUM_FAMILIES; f++) {
		snprintf(path, sizeof(path), "%s/%s", argv[1],
			 rpcr_golden_family_name((enum rpcr_golden_family)f));
		if (mkdir(path, 0755) != 0 && errno != EEXIST) {
			perror(path);
			return 1;
		}
	}
	for (i = 0; i < rpcr_goldens_count; i++) {
		const struct rpcr_golden *g = &rpcr_goldens[i];
		FILE *out;

		snprintf(path, sizeof(path), "%s/%s/%s", argv[1],
			 rpcr_golden_family_name(g->family), g->name);
		out = fopen(path, "wb");
		if (out == NULL || fwrite(g->bytes, 1, g->len, out) != g->len) {
			perror(path);
			return 1;
		}
		fclose(out);
	}
	printf("%zu seeds written under %s\n", rpcr_goldens_count, argv[1]);
	return 0;
}
