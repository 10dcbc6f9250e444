/* svg.c - the line-plot writer behind `nxvk bench --plot` (see svg.h). */
#include "svg.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

enum { WIDTH = 960, PANEL_H = 540, LEFT = 90, RIGHT = 250, TOP = 56, BOTTOM = 72, MAX_TICKS = 40 };

/* Distinct on white and in print; markers differ too, for grey scale. */
static const char *const palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                      "#9467bd", "#8c564b", "#e377c2", "#17becf"};
enum { NCOLORS = sizeof palette / sizeof palette[0], NMARKERS = 6 };

typedef struct axis_map {
  bool log;
  double lo, hi;              /* data range shown (log: of the values, not logs) */
  double px0, px1;            /* pixel ends */
} axis_map;

static double tval(const axis_map *m, double v) { return m->log ? log(v) : v; }

static double to_px(const axis_map *m, double v) {
  double a = tval(m, m->lo), b = tval(m, m->hi);
  return m->px0 + (tval(m, v) - a) / (b - a) * (m->px1 - m->px0);
}

static bool usable(const svg_axis *a, double v) { return isfinite(v) && (!a->log || v > 0); }

static void put_escaped(FILE *f, const char *s) {
  for (; s && *s; s++) {
    switch (*s) {
    case '&': fputs("&amp;", f); break;
    case '<': fputs("&lt;", f); break;
    case '>': fputs("&gt;", f); break;
    case '"': fputs("&quot;", f); break;
    default: fputc(*s, f);
    }
  }
}

static bool pow2_base(double base) {
  double l = log2(base);
  return base >= 2 && fabs(l - round(l)) < 1e-9;
}

/* Tick label: 1K 64M for binary bases, 0.1 100 1e6 otherwise. */
static void tick_label(char *buf, size_t len, double v, bool binary) {
  static const char suffix[] = "KMGTP";
  if (binary && v >= 1024) {
    int s = -1;
    double u = v;
    while (u >= 1024 && fmod(u, 1024) == 0 && s < 4) {
      u /= 1024;
      s++;
    }
    if (s >= 0) {
      snprintf(buf, len, "%g%c", u, suffix[s]);
      return;
    }
  }
  double e = floor(log10(fabs(v)) + 1e-9);
  if (v != 0 && (e >= 6 || e <= -4)) {
    double mant = v / pow(10, e);
    if (fabs(mant - 1) < 1e-9) snprintf(buf, len, "1e%d", (int)e);
    else snprintf(buf, len, "%ge%d", round(mant * 100) / 100, (int)e);
  } else {
    snprintf(buf, len, "%g", v);
  }
}

/* Range of one axis over every usable point: log axes to whole powers of
 * the base, linear axes to a 1-2-5 step. */
static void axis_range(const svg_axis *a, const svg_plot *p, bool is_x, double *lo, double *hi) {
  double mn = INFINITY, mx = -INFINITY;
  for (int s = 0; s < p->nseries; s++)
    for (int i = 0; i < p->series[s].n; i++) {
      double x = p->series[s].x[i], y = p->series[s].y[i];
      if (!usable(&p->x, x) || !usable(&p->y, y)) continue;
      double v = is_x ? x : y;
      if (v < mn) mn = v;
      if (v > mx) mx = v;
      /* min/max bars inside the frame too */
      const double *ends[2] = {p->series[s].ylo, p->series[s].yhi};
      for (int e = 0; e < 2 && !is_x; e++)
        if (ends[e] && usable(&p->y, ends[e][i])) {
          if (ends[e][i] < mn) mn = ends[e][i];
          if (ends[e][i] > mx) mx = ends[e][i];
        }
    }
  if (mn > mx) { /* nothing to draw: a unit range keeps the frame sane */
    mn = 1;
    mx = a->log ? 10 : 2;
  }
  if (a->log) {
    double base = a->base > 1 ? a->base : 10, lb = log(base);
    double e0 = floor(log(mn) / lb + 1e-9), e1 = ceil(log(mx) / lb - 1e-9);
    if (e1 <= e0) e1 = e0 + 1;
    *lo = pow(base, e0);
    *hi = pow(base, e1);
  } else {
    if (mn == mx) mx = mn + 1;
    if (mn > 0 && mn < (mx - mn)) mn = 0; /* start at zero when it is near */
    double raw = (mx - mn) / 8, mag = pow(10, floor(log10(raw))), step = mag;
    if (raw / mag > 5) step = 10 * mag;
    else if (raw / mag > 2) step = 5 * mag;
    else if (raw / mag > 1) step = 2 * mag;
    *lo = floor(mn / step) * step;
    *hi = ceil(mx / step) * step;
  }
}

/* Ticks with labels; log10 axes spanning few decades get 2x and 5x ticks. */
static int axis_ticks(const svg_axis *a, double lo, double hi, double *ticks) {
  int n = 0;
  if (a->log) {
    double base = a->base > 1 ? a->base : 10, lb = log(base);
    int e0 = (int)lround(log(lo) / lb), e1 = (int)lround(log(hi) / lb);
    int step = 1;
    while ((e1 - e0) / step + 1 > 12) step++;
    bool minor = base == 10 && e1 - e0 <= 2;
    for (int e = e0; e <= e1 && n < MAX_TICKS - 3; e += step) {
      double v = pow(base, e);
      ticks[n++] = v;
      if (minor && e < e1) {
        ticks[n++] = 2 * v;
        ticks[n++] = 5 * v;
      }
    }
  } else {
    double raw = (hi - lo) / 8, mag = pow(10, floor(log10(raw))), step = mag;
    if (raw / mag > 5) step = 10 * mag;
    else if (raw / mag > 2) step = 5 * mag;
    else if (raw / mag > 1) step = 2 * mag;
    for (double v = lo; v <= hi + step / 1e6 && n < MAX_TICKS; v += step)
      ticks[n++] = fabs(v) < step / 1e6 ? 0 : v;
  }
  return n;
}

static void axis_title(char *buf, size_t len, const svg_axis *a) {
  if (a->unit && *a->unit) snprintf(buf, len, "%s (%s)", a->label ? a->label : "", a->unit);
  else snprintf(buf, len, "%s", a->label ? a->label : "");
}

/* A marker centred on (x, y): circle, square, triangle, diamond, inverted
 * triangle, cross. */
static void marker(FILE *f, int kind, double x, double y, const char *color) {
  const double r = 4.5;
  switch (kind % NMARKERS) {
  case 0: fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\" fill=\"%s\"/>", x, y, r, color); break;
  case 1:
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"/>", x - r, y - r,
            2 * r, 2 * r, color);
    break;
  case 2:
    fprintf(f, "<polygon points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f\" fill=\"%s\"/>", x, y - r - 1, x - r - 1,
            y + r, x + r + 1, y + r, color);
    break;
  case 3:
    fprintf(f, "<polygon points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f %.1f,%.1f\" fill=\"%s\"/>", x, y - r - 1,
            x + r + 1, y, x, y + r + 1, x - r - 1, y, color);
    break;
  case 4:
    fprintf(f, "<polygon points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f\" fill=\"%s\"/>", x, y + r + 1, x - r - 1,
            y - r, x + r + 1, y - r, color);
    break;
  default:
    fprintf(f, "<path d=\"M%.1f %.1fL%.1f %.1fM%.1f %.1fL%.1f %.1f\" stroke=\"%s\" stroke-width=\"2.5\"/>",
            x - r, y - r, x + r, y + r, x - r, y + r, x + r, y - r, color);
  }
}

static void panel(FILE *f, const svg_plot *p, double y0) {
  axis_map xm = {p->x.log, 0, 0, LEFT, WIDTH - RIGHT};
  axis_map ym = {p->y.log, 0, 0, y0 + PANEL_H - BOTTOM, y0 + TOP};
  axis_range(&p->x, p, true, &xm.lo, &xm.hi);
  axis_range(&p->y, p, false, &ym.lo, &ym.hi);
  double xt[MAX_TICKS], yt[MAX_TICKS];
  int nx = axis_ticks(&p->x, xm.lo, xm.hi, xt), ny = axis_ticks(&p->y, ym.lo, ym.hi, yt);
  bool xbin = p->x.log && pow2_base(p->x.base), ybin = p->y.log && pow2_base(p->y.base);
  char buf[256];

  fprintf(f, "<g>\n<text x=\"%d\" y=\"%.1f\" font-size=\"18\" font-weight=\"bold\" text-anchor=\"middle\">",
          (LEFT + WIDTH - RIGHT) / 2, y0 + 30);
  put_escaped(f, p->title);
  fprintf(f, "</text>\n");
  /* grid and tick labels */
  for (int i = 0; i < nx; i++) {
    double x = to_px(&xm, xt[i]);
    tick_label(buf, sizeof buf, xt[i], xbin);
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#dddddd\"/>"
               "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" text-anchor=\"middle\">%s</text>\n",
            x, ym.px1, x, ym.px0 + 5, x, ym.px0 + 20, buf);
  }
  for (int i = 0; i < ny; i++) {
    double y = to_px(&ym, yt[i]);
    tick_label(buf, sizeof buf, yt[i], ybin);
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#dddddd\"/>"
               "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" text-anchor=\"end\">%s</text>\n",
            xm.px0 - 5, y, xm.px1, y, xm.px0 - 8, y + 4, buf);
  }
  fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#333333\"/>\n",
          xm.px0, ym.px1, xm.px1 - xm.px0, ym.px0 - ym.px1);
  /* axis titles */
  axis_title(buf, sizeof buf, &p->x);
  fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"14\" text-anchor=\"middle\">", (xm.px0 + xm.px1) / 2,
          ym.px0 + 48);
  put_escaped(f, buf);
  fprintf(f, "</text>\n");
  axis_title(buf, sizeof buf, &p->y);
  double cy = (ym.px0 + ym.px1) / 2;
  fprintf(f, "<text x=\"24\" y=\"%.1f\" font-size=\"14\" text-anchor=\"middle\" transform=\"rotate(-90 24 %.1f)\">",
          cy, cy);
  put_escaped(f, buf);
  fprintf(f, "</text>\n");

  /* series: polyline, markers, legend entry */
  for (int s = 0; s < p->nseries; s++) {
    const svg_series *se = &p->series[s];
    const char *color = palette[s % NCOLORS];
    fprintf(f, "<g class=\"series\">\n<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"", color);
    for (int i = 0, k = 0; i < se->n; i++) {
      if (!usable(&p->x, se->x[i]) || !usable(&p->y, se->y[i])) continue;
      fprintf(f, "%s%.1f,%.1f", k++ ? " " : "", to_px(&xm, se->x[i]), to_px(&ym, se->y[i]));
    }
    fprintf(f, "\"/>\n");
    for (int i = 0; i < se->n; i++) {
      if (!usable(&p->x, se->x[i]) || !usable(&p->y, se->y[i])) continue;
      double px = to_px(&xm, se->x[i]), py = to_px(&ym, se->y[i]);
      if (se->ylo && se->yhi) { /* the min/max bar, capped at both ends */
        double lo = usable(&p->y, se->ylo[i]) ? to_px(&ym, se->ylo[i]) : py;
        double hi = usable(&p->y, se->yhi[i]) ? to_px(&ym, se->yhi[i]) : py;
        fprintf(f, "<path class=\"minmax\" d=\"M%.1f %.1fV%.1fM%.1f %.1fH%.1fM%.1f %.1fH%.1f\" stroke=\"%s\" "
                   "stroke-width=\"1.2\" fill=\"none\"/>",
                px, lo, hi, px - 4, lo, px + 4, px - 4, hi, px + 4, color);
      }
      marker(f, s, px, py, color);
    }
    double ly = ym.px1 + 10 + 22.0 * s, lx = xm.px1 + 16;
    fprintf(f, "\n<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\"/>", lx,
            ly, lx + 30, ly, color);
    marker(f, s, lx + 15, ly, color);
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\">", lx + 38, ly + 4);
    put_escaped(f, se->label);
    fprintf(f, "</text>\n</g>\n");
  }
  fprintf(f, "</g>\n");
}

int svg_write(FILE *f, const svg_plot *plots, int nplots) {
  int h = PANEL_H * (nplots > 0 ? nplots : 1);
  fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
             "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
             "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n"
             "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
          WIDTH, h, WIDTH, h);
  for (int i = 0; i < nplots; i++) panel(f, &plots[i], (double)PANEL_H * i);
  fprintf(f, "</svg>\n");
  return ferror(f) ? -1 : 0;
}
