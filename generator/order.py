"""The summation order every kernel and the driver keep (include/bng_steps.c, the
kernels' blocks, include/bng_nchw_steps.c): what the plan, the staging and the cost
model count rows in.

Sums run over rows in three levels, each from zero in a fixed order: a block of
BLOCK_ROWS rows in registers, the blocks of a row group into the group's partial sum,
the groups into the total. The worst-case rounding error grows with BLOCK_ROWS + blocks
per group + groups instead of with batch. Group boundaries depend only on batch, never
on which cores run: the unit of work of the shared-storage entry points, so that they
add exactly what the private ones add.
"""

BLOCK_ROWS = 32
MIN_GROUP_ROWS = 256
MAX_GROUPS = 64
# NCHW (the nchw extension): a plane's vectors are summed in blocks of this many in
# registers, the blocks added to the plane's lane sums (include/bng_nchw_steps.h).
NCHW_BLOCK_VECTORS = 32
