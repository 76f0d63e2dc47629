#include "analysis_budget.h"

#include <assert.h>
#include <stdio.h>

void analysis_budget_init(analysis_budget_t *self, size_t limit, const char *setting)
{
    assert(self && setting);
    self->limit = limit;
    atomic_init(&self->used, 0);
    snprintf(self->setting, sizeof self->setting, "%s", setting);
}

bool analysis_budget_take(analysis_budget_t *self, size_t bytes)
{
    if (!self)
        return true;
    size_t used = atomic_load(&self->used);
    do {
        if (self->limit && (bytes > self->limit || used > self->limit - bytes))
            return false;
    } while (!atomic_compare_exchange_weak(&self->used, &used, used + bytes));
    return true;
}

void analysis_budget_force(analysis_budget_t *self, size_t bytes)
{
    if (self)
        atomic_fetch_add(&self->used, bytes);
}

void analysis_budget_give(analysis_budget_t *self, size_t bytes)
{
    if (!self)
        return;
    size_t was = atomic_fetch_sub(&self->used, bytes);
    assert(was >= bytes); /* gave back more than was taken: our bug */
    (void) was;
}

void analysis_budget_describe(const analysis_budget_t *self, char *out, size_t cap)
{
    assert(self && out);
    /* MiB when the limit is whole MiB, as the setting is written. */
    if (self->limit % (1024 * 1024) == 0)
        snprintf(out, cap, "the analysis of one job may hold at most %zu MiB (%s); this capture needs more: raise it, "
                 "or profile fewer launches (ncu --launch-count, --kernel-name)", self->limit >> 20, self->setting);
    else
        snprintf(out, cap, "the analysis of one job may hold at most %zu bytes (%s); this capture needs more: raise "
                 "it, or profile fewer launches (ncu --launch-count, --kernel-name)", self->limit, self->setting);
}
