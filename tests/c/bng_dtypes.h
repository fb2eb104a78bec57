#ifndef BNG_DTYPES_H
#define BNG_DTYPES_H

#include "bng_test_support.h"

/* Every storage type the target under test has. */
extern const bng_dtype *const bng_dtypes[];
extern const int bng_dtype_count;

#endif
