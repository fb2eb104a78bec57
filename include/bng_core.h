/* Summation order shared by every kernel and by both memory drivers.
 *
 * Sums run over rows in three levels, each from zero in a fixed order: a block of
 * BNG_BLOCK_ROWS rows in registers, the blocks of a row group in the group's partial
 * sum, the groups in the total. The worst-case rounding error then grows with
 * BNG_BLOCK_ROWS + blocks per group + groups instead of with batch. Group boundaries
 * depend only on batch, never on which cores run, so the shared-storage entry points
 * (one group at a time per core) add exactly what the private ones add.
 */
#ifndef BNG_CORE_H
#define BNG_CORE_H

#include <stddef.h>

#define BNG_BLOCK_ROWS 32
#define BNG_MIN_GROUP_ROWS 256
#define BNG_MAX_GROUPS 64

/* Rows per group (the last group may be shorter): a multiple of BNG_BLOCK_ROWS. */
static inline size_t bng_group_rows(size_t batch)
{
    size_t groups = (batch + BNG_MIN_GROUP_ROWS - 1) / BNG_MIN_GROUP_ROWS;
    size_t rows;

    if (groups > BNG_MAX_GROUPS)
        groups = BNG_MAX_GROUPS;
    rows = (batch + groups - 1) / groups;
    return (rows + BNG_BLOCK_ROWS - 1) / BNG_BLOCK_ROWS * BNG_BLOCK_ROWS;
}

#endif /* BNG_CORE_H */
