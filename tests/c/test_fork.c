/* fork() after the host HAL's core threads exist: a child calling _s with
 * several cores must get its own threads, not wait forever for its parent's. Each
 * child and the whole program run under alarm(): a regression fails, it does not hang.
 *
 *   1. _s with core_mask 0xff in the parent (the core threads start), then fork; the
 *      child calls _s with 0xff twice and checks the result.
 *   2. A grandchild: the child forks again after its own calls.
 *   3. A second thread of the parent calls _s in a loop while the main thread forks:
 *      each child calls _s (a fork waits for a call in progress to end).
 *
 * Built with -DBNG_HOST -Iinclude -Igenerated/<t> -Itests/c and the target's library.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "batch_norm_grad.h"
#include "bng_example.h"
#include "bng_kernels.h"

#define BATCH 16
#define CHANNEL 64
#define CHILD_SECONDS 10      /* a child still waiting after this has hung */
/* 0xff as in the issue (two or more cores), or every core of a smaller target */
#define CORE_MASK (BNG_TARGET_CORES >= 8 ? 0xff : (1 << BNG_TARGET_CORES) - 1)

typedef struct {
    float x[BATCH * CHANNEL], dy[BATCH * CHANNEL], dx[BATCH * CHANNEL];
    float mean[CHANNEL], invar[CHANNEL], scale[CHANNEL], dbias[CHANNEL], dscale[CHANNEL];
} problem;

static problem main_problem, thread_problem;
/* The _s ABI has one parameter block: calls from two threads take turns on it. */
static pthread_mutex_t params_lock = PTHREAD_MUTEX_INITIALIZER;

/* One _s call on p; 0 when it returned BNG_OK and the outputs match the reference. */
static int call_s(problem *p, const char *label, int quiet)
{
    long long *params = BNG_SHARED_PARAMS;
    long long status;
    int bad;

    pthread_mutex_lock(&params_lock);
    params[0] = (long long)(intptr_t)p->mean;
    params[1] = (long long)(intptr_t)p->invar;
    params[2] = (long long)(intptr_t)p->scale;
    params[3] = (long long)(intptr_t)p->dbias;
    params[4] = (long long)(intptr_t)p->dscale;
    params[5] = BATCH;
    params[6] = CHANNEL;
    params[7] = 1;
    memset(p->dx, 0, sizeof p->dx);
    fp_batch_norm_grad_s(p->x, p->dy, p->dx, CORE_MASK);
    status = params[8];
    pthread_mutex_unlock(&params_lock);
    if (status != BNG_OK) {
        printf("%s: status %lld\n", label, status);
        return 1;
    }
    if (quiet)
        return 0;
    bad = bng_example_check(label, BATCH, CHANNEL, 1, p->x, p->dy, p->mean, p->invar,
                            p->scale, p->dx, p->dbias, p->dscale);
    return bad;
}

/* fork; the child runs body() under alarm() and exits with its result. Returns 0 when
 * the child exited 0. */
static int in_child(const char *label, int (*body)(void))
{
    int status;
    pid_t pid;

    fflush(stdout);
    pid = fork();
    if (pid < 0) {
        perror("fork");
        return 1;
    }
    if (pid == 0) {
        alarm(CHILD_SECONDS);       /* default action: the child dies of SIGALRM */
        int result = body();
        fflush(stdout);
        _exit(result);
    }
    if (waitpid(pid, &status, 0) != pid) {
        perror("waitpid");
        return 1;
    }
    if (WIFSIGNALED(status)) {
        printf("FAIL %s: the child died of signal %d%s\n", label, WTERMSIG(status),
               WTERMSIG(status) == SIGALRM ? " (it hung: no core threads after fork)" : "");
        return 1;
    }
    if (WEXITSTATUS(status) != 0) {
        printf("FAIL %s: the child exited %d\n", label, WEXITSTATUS(status));
        return 1;
    }
    printf("ok %s\n", label);
    return 0;
}

static int grandchild(void)
{
    return call_s(&main_problem, "grandchild: _s 0xff", 0);
}

static int child(void)
{
    if (call_s(&main_problem, "child: _s 0xff", 0) || call_s(&main_problem, "child: _s 0xff again", 0))
        return 1;
    return in_child("a grandchild forked after the child's own _s calls", grandchild);
}

static int child_of_busy_parent(void)
{
    return call_s(&main_problem, "child of a busy parent: _s 0xff", 1);
}

static atomic_int stop;

/* The program's own fork handlers for its own lock, as any program calling _s from two
 * threads needs. Registered after the HAL's (its first call registers them), so they
 * run first before a fork: the fork waits for the other thread's call to end here,
 * before the HAL's handler takes its cluster lock. */
static void lock_params(void) { pthread_mutex_lock(&params_lock); }
static void unlock_params(void) { pthread_mutex_unlock(&params_lock); }

static void *caller(void *unused)
{
    (void)unused;
    while (!atomic_load(&stop))
        if (call_s(&thread_problem, "parent's second thread", 1))
            abort();
    return NULL;
}

static void fill(problem *p)
{
    bng_example_fill(BATCH, CHANNEL, p->x, p->dy, p->mean, p->invar, p->scale);
}

int main(void)
{
    pthread_t thread;
    int failed = 0, i;

    alarm(6 * CHILD_SECONDS);       /* the parent's own guard */
    fill(&main_problem);
    fill(&thread_problem);
    failed |= call_s(&main_problem, "parent: _s 0xff (the core threads start)", 0);
    failed |= in_child("fork after _s: the child calls _s 0xff", child);
    failed |= call_s(&main_problem, "parent after the fork: _s 0xff", 0);

    if (pthread_atfork(lock_params, unlock_params, unlock_params) != 0) {
        printf("FAIL: pthread_atfork\n");
        return 1;
    }

    if (pthread_create(&thread, NULL, caller, NULL) != 0) {
        printf("FAIL: cannot start a thread\n");
        return 1;
    }
    for (i = 0; i < 8; i++)
        failed |= in_child("fork while another thread calls _s", child_of_busy_parent) != 0;
    atomic_store(&stop, 1);
    pthread_join(thread, NULL);
    printf("%s: test_fork\n", failed ? "FAIL" : "PASS");
    return failed;
}
