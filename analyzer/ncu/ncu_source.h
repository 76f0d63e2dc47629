/* ncu_source: Nsight Compute's source page, per source line.
 *
 * `ncu --import R.ncu-rep --csv --page source --print-source cuda,sass` prints,
 * per profiled function, a "File Path" and a "Function Name" row, a header,
 * then each CUDA source line (its "Line No" and text, with the line's totals)
 * followed by the SASS instructions compiled from it (their address and text,
 * with per-instruction samples, instruction counts and memory counters; ncu
 * lists an instruction again under each view of a loop, so instructions are
 * counted once per address). This module reads that page and adds the SASS
 * rows up per source line ("site"). A build without -lineinfo has no line
 * numbers: every SASS instruction is then a site of its own, and
 * ncu_source_kernel_t.line_info says so. A function whose code comes from
 * several files (inlined headers) has a "File Path" row before each file's
 * lines: a line is known by its file and number.
 *
 * The page is untrusted input: fields, rows, sites and functions are bounded
 * and a row that does not match its header is refused with its line number. */
#ifndef NCU_SOURCE_H
#define NCU_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pf_error.h"

/* Limits on untrusted input. */
#define NCU_SOURCE_MAX_BYTES ((size_t) 256 * 1024 * 1024) /* one page */
#define NCU_SOURCE_MAX_FIELD (64u * 1024)                 /* one field, bytes */
#define NCU_SOURCE_MAX_COLUMNS 1024                       /* columns in a header */
#define NCU_SOURCE_MAX_SITES 65536                        /* sites per function */
#define NCU_SOURCE_MAX_KERNELS 256                        /* functions per page */
#define NCU_SOURCE_TEXT_MAX 200                           /* source text kept, bytes */
#define NCU_SOURCE_MAX_FILES 256                          /* source files per function */

/* What one source line (or, without line info, one SASS instruction) did.
 * Counts are summed over the SASS instructions of the site. */
typedef struct {
    unsigned line;            /* 1-based source line; 0 without line info */
    const char *file;         /* the line's source file (owned by the kernel), "" when unnamed */
    uint64_t address;         /* the site's first SASS instruction (its own without line info) */
    char text[NCU_SOURCE_TEXT_MAX + 1]; /* the CUDA line, or the SASS instruction, trimmed */
    char sass[64];            /* the SASS instruction with the most samples, trimmed */
    double sass_samples;      /* its samples */
    double samples;           /* warp stall samples (all) */
    double inst;              /* warp-level instructions executed */
    double thread_inst;       /* thread instructions executed */
    double pred_inst;         /* predicated-on thread instructions executed */
    double requests;          /* L1 tag requests, global */
    double sectors;           /* L2 theoretical sectors, global */
    double sectors_ideal;     /* ... the same accesses fully coalesced */
    double sectors_excess;    /* ... beyond the ideal */
    double conflict_wavefronts; /* shared: (N-way - 1) x executions, summed */
    double shared_inst;       /* executions of shared instructions with an N-way figure */
    double local_inst;        /* executions of local-memory instructions */
    double local_sectors;     /* L2 theoretical sectors, local (0 when not captured) */
    char stall[32];           /* the stall reason with the most samples ("long_sb"), or "" */
    double stall_samples;     /* its samples */
    double barrier_samples;   /* stall_barrier samples */
} ncu_source_site_t;

typedef struct {
    char function[512];       /* "aos_float3_x(const P3 *, float *, unsigned long)" */
    char file[512];           /* the function's (first) source file, "" when the page names none */
    char **files;             /* every file its lines come from (inlined code, headers) */
    size_t file_count;
    bool line_info;           /* the build had -lineinfo: sites are source lines */
    bool has_local_sectors;   /* the page has "L2 Theoretical Sectors Local" */
    ncu_source_site_t *sites;
    size_t site_count;
    double samples;           /* over all sites */
} ncu_source_kernel_t;

typedef struct ncu_source_t ncu_source_t;

ncu_source_t *ncu_source_new(void);
void ncu_source_destroy(ncu_source_t **self_p);

/* True when these first bytes of a file are a source page: they start with
 * its "File Path" / "Function Name" rows or its header (after any
 * "==PROF==" / "==WARNING==" lines). */
bool ncu_source_sniff(const char *head, size_t len);

/* Adds the functions of one page. `name` names it in errors. On error the
 * functions read before the bad page stay, the bad page adds none. */
pf_status_t ncu_source_parse(ncu_source_t *self, const char *name, const char *bytes, size_t len,
                             pf_error_t *err);

size_t ncu_source_kernel_count(const ncu_source_t *self);
const ncu_source_kernel_t *ncu_source_kernel(const ncu_source_t *self, size_t index);

/* The function whose name matches a kernel's: the same name, the same name
 * without the casts the source page writes in template arguments
 * ("copy_round<(int)1>" for the raw page's "copy_round<1>"), or the same name
 * before its parameter list; a page with line numbers before a SASS-only one.
 * NULL when none does. */
const ncu_source_kernel_t *ncu_source_find(const ncu_source_t *self, const char *kernel);

/* True when ncu warned that it had no source view of this function (a build
 * without -lineinfo, exported with --print-source cuda,...). */
bool ncu_source_lacks_lines(const ncu_source_t *self, const char *kernel);

#endif
