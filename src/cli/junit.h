/*
 * junit.h - JUnit XML reports (--junit FILE of stress and conformance), as
 * CI systems read them (Jenkins, GitLab, GitHub test reporters): one
 * <testsuites> with a <testsuite> per mode or device and a <testcase> per
 * check, a <failure> or <skipped> inside where it did not pass.
 */
#ifndef NXVK_JUNIT_H
#define NXVK_JUNIT_H

#include <stdbool.h>
#include <stdio.h>

typedef enum { JUNIT_PASS, JUNIT_FAIL, JUNIT_SKIP } junit_status;

typedef struct junit_case {
  char *classname, *name;
  junit_status status;
  char *message;                /* failure or skip message; NULL when passed */
  char *text;                   /* inside <failure>, or <system-out> of a pass; may be NULL */
  double seconds;
} junit_case;

typedef struct junit_suite {
  char *name;
  double seconds;
  junit_case *cases;
  int n, cap;
} junit_suite;

typedef struct junit_doc {
  char *name;
  junit_suite *suites;
  int n, cap;
  bool oom;                     /* a case was lost to a full heap: the write fails */
} junit_doc;

void junit_init(junit_doc *d, const char *name);
/* The new suite's index (its pointer moves as suites are added), -1 on no memory. */
int junit_add_suite(junit_doc *d, const char *name, double seconds);
void junit_add_case(junit_doc *d, int suite, const char *classname, const char *name, junit_status st,
                    const char *message, const char *text, double seconds);
/* Print the document to f (written through cli_write_with, so a file is
 * replaced atomically); 0, or -1 when a case was lost or a write failed. */
int junit_print(FILE *f, const void *doc); /* doc: a junit_doc */
void junit_free(junit_doc *d);

#endif
