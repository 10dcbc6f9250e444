/*
 * svg.h - a small SVG line-plot writer with no dependencies: one or more
 * panels stacked vertically, each with linear or log axes, labelled ticks,
 * axis titles with units, a title, and per series one polyline, a marker at
 * every point (with a min/max bar where the series has them) and a legend
 * entry.  Written for `nxvk bench --plot`.
 */
#ifndef NXVK_SVG_H
#define NXVK_SVG_H

#include <stdbool.h>
#include <stdio.h>

typedef struct svg_series {
  const char *label;          /* legend text */
  int n;                      /* points */
  const double *x, *y;        /* n values each; points with a value <= 0 on a
                                 log axis (or not finite) are left out */
  const double *ylo, *yhi;    /* NULL, or n values each: a min/max bar at
                                 every point (e.g. the fastest and slowest
                                 run); a bar end not usable is left out */
} svg_series;

typedef struct svg_axis {
  const char *label;          /* "matrix size n" */
  const char *unit;           /* "GFLOPS"; shown as "label (unit)"; may be NULL */
  bool log;
  double base;                /* log axes: ticks at powers of base (2, 4, 10);
                                 0 means 10.  Ticks of a base that is a power
                                 of 2 are labelled 1K, 4M (binary suffixes). */
} svg_axis;

typedef struct svg_plot {
  const char *title;
  svg_axis x, y;
  int nseries;
  const svg_series *series;
} svg_plot;

/* Write an SVG document of nplots panels to f.  Returns 0, or -1 when a
 * write failed (ferror). */
int svg_write(FILE *f, const svg_plot *plots, int nplots);

#endif
