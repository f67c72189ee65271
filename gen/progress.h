/* What apigen is doing, for a person waiting on a large header set
 * (progress.c). */
#ifndef APIGEN_GEN_PROGRESS_H
#define APIGEN_GEN_PROGRESS_H


/* "apigen: [2.4 s] parsing 3 headers" on stderr when APIGEN_PROGRESS=1, or
 * when it is unset and stderr is a terminal; a phase is shown only when a
 * quarter second has passed since the last line (a quick run says nothing;
 * APIGEN_PROGRESS=all shows every phase). */
void gen_progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "apigen: [9.1 s] done" when anything was shown */
void gen_progress_done(void);

#endif
