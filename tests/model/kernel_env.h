/*
 * The model's kernels from H2O_KERNEL (avx512, avx2, portable), for the
 * model's tests that tests/model/meson.build runs once per variant.
 */
#ifndef H2O_TEST_KERNEL_ENV_H
#define H2O_TEST_KERNEL_ENV_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h2o/llama.h"

/* -1 to go on with the variant H2O_KERNEL names (or the widest, without
 * it), 77 when this processor cannot run it, 1 for a name that is none. */
static inline int model_kernel_from_env(void)
{
	const char *kernel = getenv("H2O_KERNEL");
	if (kernel && *kernel) {
		const int rc = llama_kernel_select(kernel);
		if (rc == -1) {
			printf("H2O_KERNEL=%s: this machine cannot execute it, skipped\n", kernel);
			return 77;
		}
		if (rc < 0 || strcmp(llama_kernel_name(), kernel) != 0) {
			fprintf(stderr, "H2O_KERNEL=%s: not a variant of the model's kernels\n",
			        kernel);
			return 1;
		}
	}
	printf("model kernels: %s\n", llama_kernel_name());
	return -1;
}

#endif
