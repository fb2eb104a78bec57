/* The reference hthreads HAL's launch, on the runtime mock and the host launcher (make
 * hal-conformance), in the launch model it is built for (BNG_TEST_LAUNCH_FANOUT or
 * BNG_TEST_LAUNCH_SPMD):
 *   1. each in a child process, these stop with a message: barrier ids the host side
 *      did not create (the mock), a fifth outstanding put (a breach of bng_hal.h's
 *      contract), _s from a thread no launch made a core (the mock says to launch
 *      first), and in an SPMD build the fan-out launch (the worker names the macro);
 *   2. fan-out: the first _s call right after the workers are started, while they are
 *      still starting (the mock starts them late), completes and matches _p;
 *   3. vector_malloc failing on a selected core: _s returns BNG_ENOMEM and leaves dx,
 *      dbias and dscale untouched; on a core outside core_mask: BNG_OK;
 *   4. after the failure the next call succeeds (the AM was given back each call);
 *   5. split targets: _p, which takes its workspace from the calling core's AM, returns
 *      BNG_ENOMEM with its outputs untouched when vector_malloc refuses, then succeeds.
 * A watchdog fails a hang. Exit status 0 when all hold.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "batch_norm_grad.h"
#include "bng_kernels.h"
#include "bng_hal.h"
#include "bng_hal_hthreads.h"
#include "hthread_device.h"
#include "hthread_launch.h"
#include "hthread_mock.h"

#define BATCH 600
#define CHANNEL 64
#define MARK 0x3C

static float x[BATCH * CHANNEL], dy[BATCH * CHANNEL], dx[BATCH * CHANNEL];
static float mean[CHANNEL], invar[CHANNEL], scale[CHANNEL], dbias[CHANNEL], dscale[CHANNEL];
static float want_dx[BATCH * CHANNEL], want_dbias[CHANNEL], want_dscale[CHANNEL];
static int failures;

static void fail(const char *what)
{
    fprintf(stderr, "test_hthreads_launch: FAIL: %s\n", what);
    failures++;
}

static void params(long long *p)
{
    memset(p, 0, BNG_PARAMS_LEN * sizeof *p);
    p[BNG_PARAM_MEAN] = (long long)(size_t)mean;
    p[BNG_PARAM_INVAR] = (long long)(size_t)invar;
    p[BNG_PARAM_SCALE] = (long long)(size_t)scale;
    p[BNG_PARAM_DBIAS] = (long long)(size_t)dbias;
    p[BNG_PARAM_DSCALE] = (long long)(size_t)dscale;
    p[BNG_PARAM_BATCH] = BATCH;
    p[BNG_PARAM_CHANNEL] = CHANNEL;
    p[BNG_PARAM_IS_TRAIN] = 1;
    p[BNG_PARAM_STATUS] = 12345;
}

static void on_every_core(void *mask)
{
    fp_batch_norm_grad_s(x, dy, dx, *(int *)mask);
}

/* One _s call as the launch model makes it; returns the status. */
static long long call_s(int mask)
{
    params(BNG_SHARED_PARAMS);
#if BNG_TEST_LAUNCH_SPMD
    hthread_launch_spmd(on_every_core, &mask);
#else
    fp_batch_norm_grad_s(x, dy, dx, mask);
#endif
    return BNG_SHARED_PARAMS[BNG_PARAM_STATUS];
}

static void mark_outputs(void)
{
    memset(dx, MARK, sizeof dx);
    memset(dbias, MARK, sizeof dbias);
    memset(dscale, MARK, sizeof dscale);
}

static int outputs_marked(void)
{
    const unsigned char *all[3] = {(const unsigned char *)dx, (const unsigned char *)dbias,
                                   (const unsigned char *)dscale};
    const size_t sizes[3] = {sizeof dx, sizeof dbias, sizeof dscale};
    size_t k, i;
    for (k = 0; k < 3; k++)
        for (i = 0; i < sizes[k]; i++)
            if (all[k][i] != MARK)
                return 0;
    return 1;
}

static int outputs_match(void)
{
    return memcmp(dx, want_dx, sizeof dx) == 0 && memcmp(dbias, want_dbias, sizeof dbias) == 0
        && memcmp(dscale, want_dscale, sizeof dscale) == 0;
}

/* A launcher that hands every core the old fixed ids 14 and 15, which nobody created. */
static void init_uncreated_ids(void)
{
    (void)bng_hal_hthreads_init(14, 15);
}

/* A body that breaks bng_hal.h's contract: five puts outstanding at once. */
static void five_puts(unsigned core, void *arg)
{
    static BNG_SHARED float sink[BNG_TARGET_CORES][5];
    size_t bytes;
    float *local = bng_hal_private(core, &bytes);
    int i;

    (void)arg;
    for (i = 0; i < 5; i++)
        (void)bng_hal_dma_put(&sink[core][i], local, 1, sizeof(float), 0, 0);
}

#if BNG_TEST_LAUNCH_FANOUT
static void uncreated_ids_worker(void)
{
    init_uncreated_ids();
    bng_hal_hthreads_worker();
}

static void uncreated_ids_call(void)
{
    hthread_mock_adopt_core_0();
    init_uncreated_ids();
    hthread_mock_start_other_cores(uncreated_ids_worker);
    (void)call_s((1 << BNG_TARGET_CORES) - 1);
}

static void five_puts_call(void)
{
    hthread_launch_fanout();
    (void)bng_hal_parallel(1, five_puts, NULL, 0);
}
#else
static void uncreated_ids_core(void *mask)
{
    init_uncreated_ids();
    on_every_core(mask);
}

static void uncreated_ids_call(void)
{
    int mask = (1 << BNG_TARGET_CORES) - 1;
    params(BNG_SHARED_PARAMS);
    hthread_mock_run_group(uncreated_ids_core, &mask);
}

static void spmd_five_puts(void *unused)
{
    (void)unused;
    (void)bng_hal_parallel(1, five_puts, NULL, 0);
}

static void five_puts_call(void)
{
    hthread_launch_spmd(spmd_five_puts, NULL);
}

/* Start-up code written for fan-out in an SPMD build: _s from this thread, core 0, waits
 * at its first barrier for cores that run the worker, which stops the run. */
static void fanout_launch_call(void)
{
    int mask = (1 << BNG_TARGET_CORES) - 1;
    params(BNG_SHARED_PARAMS);
    hthread_launch_fanout();
    on_every_core(&mask);
}
#endif

/* The manual's example as is: _s from main, which no launch made a core. */
static void unlaunched_call(void)
{
    int mask = (1 << BNG_TARGET_CORES) - 1;
    params(BNG_SHARED_PARAMS);
    on_every_core(&mask);
}

/* In a child (before any core thread exists here), `run` must abort with a message
 * that holds `expected`. */
static void expect_trap(void (*run)(void), const char *expected, const char *what)
{
    int pipe_fds[2], status;
    char out[4096];
    ssize_t n, got = 0;
    pid_t child;

    if (pipe(pipe_fds) != 0 || (child = fork()) < 0) {
        fail("cannot fork");
        return;
    }
    if (child == 0) {
        dup2(pipe_fds[1], 2);
        alarm(20);
        run();
        _exit(0);
    }
    close(pipe_fds[1]);
    while (got < (ssize_t)sizeof out - 1 && (n = read(pipe_fds[0], out + got, sizeof out - 1 - (size_t)got)) > 0)
        got += n;
    out[got] = 0;
    close(pipe_fds[0]);
    waitpid(child, &status, 0);
    if (!(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT) || !strstr(out, expected)) {
        fail(what);
        fprintf(stderr, "  (the child %s %d, and said: %s)\n", WIFSIGNALED(status) ? "ended by signal"
                : "exited with", WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status), out);
    } else
        printf("test_hthreads_launch: %s traps: %.*s", what, (int)strcspn(out, "\n") + 1, out);
}

#if BNG_SPLIT_MEMORY
/* _p on core 0 (this thread) with vector_malloc refusing there, then granting. */
static void p_without_workspace(void)
{
    long long p[BNG_PARAMS_LEN];

    hthread_mock_fail_vector_malloc(1u);
    mark_outputs();
    params(p);
    fp_batch_norm_grad_p(x, dy, dx, p);
    if (p[BNG_PARAM_STATUS] != BNG_ENOMEM || !outputs_marked())
        fail("_p without a workspace: status is not BNG_ENOMEM, or an output was written");
    hthread_mock_fail_vector_malloc(0);
    params(p);
    fp_batch_norm_grad_p(x, dy, dx, p);
    if (p[BNG_PARAM_STATUS] != BNG_OK || !outputs_match())
        fail("_p after its BNG_ENOMEM: status or results");
}
#endif

static void watchdog(int sig)
{
    (void)sig;
    static const char msg[] = "test_hthreads_launch: FAIL: hung (watchdog)\n";
    if (write(2, msg, sizeof msg - 1) < 0)
        _exit(3);
    _exit(3);
}

int main(void)
{
    const int all = (1 << BNG_TARGET_CORES) - 1;
    long long p[BNG_PARAMS_LEN];
    size_t i;

    for (i = 0; i < BATCH * CHANNEL; i++) {
        x[i] = (float)((i * 37) % 101) / 25.0f - 2.0f;
        dy[i] = (float)((i * 53) % 97) / 30.0f - 1.5f;
    }
    for (i = 0; i < CHANNEL; i++) {
        mean[i] = 0.05f * (float)(i % 7);
        invar[i] = 1.0f + 0.01f * (float)i;
        scale[i] = 0.5f + 0.02f * (float)i;
    }
    expect_trap(uncreated_ids_call, "was not created", "barrier ids 14 and 15, never created,");
    expect_trap(five_puts_call, "a fifth outstanding put", "a fifth outstanding put");
    expect_trap(unlaunched_call, "Launch the cores first", "_s on a thread that is no core");
#if BNG_TEST_LAUNCH_SPMD
    expect_trap(fanout_launch_call, "-DBNG_HTHREADS_LAUNCH=BNG_LAUNCH_FANOUT",
                "the fan-out launch in an SPMD build");
#endif

#if BNG_SPLIT_MEMORY
    hthread_mock_adopt_core_0();    /* _p takes its workspace from a core's AM */
#endif
    params(p);
    p[BNG_PARAM_DBIAS] = (long long)(size_t)want_dbias;
    p[BNG_PARAM_DSCALE] = (long long)(size_t)want_dscale;
    fp_batch_norm_grad_p(x, dy, want_dx, p);
    if (p[BNG_PARAM_STATUS] != BNG_OK)
        fail("the _p reference call");

    signal(SIGALRM, watchdog);
    alarm(60);
#if BNG_TEST_LAUNCH_FANOUT
    hthread_launch_fanout();        /* the workers start late: still starting below */
#endif
    mark_outputs();
    if (call_s(all) != BNG_OK || !outputs_match())
        fail("the first call, workers still starting: status or results");

    hthread_mock_fail_vector_malloc(1u << (BNG_TARGET_CORES / 2));
    mark_outputs();
    if (call_s(all) != BNG_ENOMEM)
        fail("vector_malloc failing on a selected core: status is not BNG_ENOMEM");
    if (!outputs_marked())
        fail("vector_malloc failing on a selected core: an output was written");
    mark_outputs();
    if (call_s(all & ~(1 << (BNG_TARGET_CORES / 2))) != BNG_OK || !outputs_match())
        fail("vector_malloc failing on a core outside core_mask: status or results");
    hthread_mock_fail_vector_malloc(0);
    mark_outputs();
    if (call_s(all) != BNG_OK || !outputs_match())
        fail("the call after a BNG_ENOMEM: status or results (AM not given back?)");
    mark_outputs();
    if (call_s(1) != BNG_OK || !outputs_match())
        fail("one core: status or results");
#if BNG_SPLIT_MEMORY
    p_without_workspace();
#endif
#if BNG_TEST_LAUNCH_FANOUT
    bng_hal_hthreads_stop_workers();
#endif
    alarm(0);
    printf("test_hthreads_launch (%s): %s%s\n",
#if BNG_TEST_LAUNCH_FANOUT
           "fan-out", failures ? "FAILED" : "late workers, BNG_ENOMEM with untouched outputs, recovery: ok",
#else
           "SPMD", failures ? "FAILED" : "the launch, BNG_ENOMEM with untouched outputs, recovery: ok",
#endif
           BNG_SPLIT_MEMORY && !failures ? "; _p without a workspace: BNG_ENOMEM, outputs untouched: ok" : "");
    return failures ? 1 : 0;
}
