/*
 * output: standard output's errors, told (design §4: exit status 1, one
 * line "h2o-tui: standard output: REASON" on stderr), and the standard
 * descriptors kept from being reused when the caller closed them.
 */
#ifndef H2O_OUTPUT_H
#define H2O_OUTPUT_H

/* When descriptor 1 or 2 is closed, open /dev/null read-only in its place:
 * writes to it then fail (EBADF) and are told, instead of landing in a
 * file this program opens later (a scene, --plot's file). */
void output_guard(void);

/* A mode's writer failed doing WHAT: when stdout's error flag is set, one
 * line with the system's reason and EXIT_WRITE; else memory ran out: one
 * line and EXIT_MEMORY. */
int output_failed(const char *what);

/* Out of memory while doing WHAT: one line, EXIT_MEMORY. */
int output_out_of_memory(const char *what);

/* The end of a run that would exit RC: stdout flushed; when RC is 0 and
 * stdout could not be written, one line and EXIT_WRITE. Returns the exit
 * status. */
int output_finish(int rc);

#endif
