/* junit.c - JUnit XML reports for stress and conformance (see junit.h). */
#include "junit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

void junit_init(junit_doc *d, const char *name) {
  memset(d, 0, sizeof *d);
  d->name = strdup(name);
  d->oom = !d->name;
}

int junit_add_suite(junit_doc *d, const char *name, double seconds) {
  if (d->n == d->cap) {
    int cap = d->cap ? 2 * d->cap : 8;
    junit_suite *p = realloc(d->suites, (size_t)cap * sizeof *p);
    if (!p) {
      d->oom = true;
      return -1;
    }
    d->suites = p;
    d->cap = cap;
  }
  junit_suite *s = &d->suites[d->n];
  memset(s, 0, sizeof *s);
  s->name = strdup(name);
  s->seconds = seconds;
  if (!s->name) d->oom = true;
  return d->n++;
}

void junit_add_case(junit_doc *d, int suite, const char *classname, const char *name, junit_status st,
                    const char *message, const char *text, double seconds) {
  if (suite < 0 || suite >= d->n) {
    d->oom = true;
    return;
  }
  junit_suite *s = &d->suites[suite];
  if (s->n == s->cap) {
    int cap = s->cap ? 2 * s->cap : 64;
    junit_case *p = realloc(s->cases, (size_t)cap * sizeof *p);
    if (!p) {
      d->oom = true;
      return;
    }
    s->cases = p;
    s->cap = cap;
  }
  junit_case *c = &s->cases[s->n++];
  c->classname = strdup(classname);
  c->name = strdup(name);
  c->status = st;
  c->message = st == JUNIT_PASS ? NULL : dup_or_null(message ? message : "");
  c->text = dup_or_null(text);
  c->seconds = seconds;
  if (!c->classname || !c->name || (st != JUNIT_PASS && !c->message)) d->oom = true;
}

void junit_free(junit_doc *d) {
  for (int i = 0; i < d->n; i++) {
    junit_suite *s = &d->suites[i];
    for (int k = 0; k < s->n; k++) {
      free(s->cases[k].classname);
      free(s->cases[k].name);
      free(s->cases[k].message);
      free(s->cases[k].text);
    }
    free(s->cases);
    free(s->name);
  }
  free(d->suites);
  free(d->name);
  memset(d, 0, sizeof *d);
}

/* XML text: the five entities escaped, control characters (not allowed in
 * XML 1.0) shown as '?', tab and newline kept. */
static void xml_text(FILE *f, const char *s) {
  for (const unsigned char *p = (const unsigned char *)s; p && *p; p++) {
    switch (*p) {
    case '&': fputs("&amp;", f); break;
    case '<': fputs("&lt;", f); break;
    case '>': fputs("&gt;", f); break;
    case '"': fputs("&quot;", f); break;
    case '\'': fputs("&apos;", f); break;
    default:
      if (*p < 0x20 && *p != '\n' && *p != '\t') fputc('?', f);
      else fputc(*p, f);
    }
  }
}

static void counts(const junit_case *c, int n, int *fail, int *skip) {
  *fail = *skip = 0;
  for (int i = 0; i < n; i++) {
    *fail += c[i].status == JUNIT_FAIL;
    *skip += c[i].status == JUNIT_SKIP;
  }
}

static void write_doc(FILE *f, const junit_doc *d) {
  int tests = 0, fails = 0, skips = 0;
  double secs = 0;
  for (int i = 0; i < d->n; i++) {
    int fl, sk;
    counts(d->suites[i].cases, d->suites[i].n, &fl, &sk);
    tests += d->suites[i].n;
    fails += fl;
    skips += sk;
    secs += d->suites[i].seconds;
  }
  fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"");
  xml_text(f, d->name);
  fprintf(f, "\" tests=\"%d\" failures=\"%d\" errors=\"0\" skipped=\"%d\" time=\"%.3f\">\n", tests, fails, skips,
          secs);
  for (int i = 0; i < d->n; i++) {
    const junit_suite *s = &d->suites[i];
    int fl, sk;
    counts(s->cases, s->n, &fl, &sk);
    fprintf(f, "  <testsuite name=\"");
    xml_text(f, s->name);
    fprintf(f, "\" tests=\"%d\" failures=\"%d\" errors=\"0\" skipped=\"%d\" time=\"%.3f\">\n", s->n, fl, sk,
            s->seconds);
    for (int k = 0; k < s->n; k++) {
      const junit_case *c = &s->cases[k];
      fprintf(f, "    <testcase classname=\"");
      xml_text(f, c->classname);
      fprintf(f, "\" name=\"");
      xml_text(f, c->name);
      fprintf(f, "\" time=\"%.3f\"", c->seconds);
      if (c->status == JUNIT_PASS) {
        if (c->text) { /* what the check found, for a reader of the report */
          fprintf(f, ">\n      <system-out>");
          xml_text(f, c->text);
          fprintf(f, "</system-out>\n    </testcase>\n");
        } else {
          fprintf(f, "/>\n");
        }
        continue;
      }
      fprintf(f, ">\n      <%s message=\"", c->status == JUNIT_FAIL ? "failure" : "skipped");
      xml_text(f, c->message);
      if (c->status == JUNIT_FAIL) {
        fprintf(f, "\" type=\"failure\">");
        xml_text(f, c->text ? c->text : c->message);
        fprintf(f, "</failure>\n");
      } else {
        fprintf(f, "\"/>\n");
      }
      fprintf(f, "    </testcase>\n");
    }
    fprintf(f, "  </testsuite>\n");
  }
  fprintf(f, "</testsuites>\n");
}

int junit_print(FILE *f, const void *doc) {
  const junit_doc *d = doc;
  if (d->oom) return -1; /* a case lost to a full heap: no partial report */
  write_doc(f, d);
  return ferror(f) ? -1 : 0;
}
