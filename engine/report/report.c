/* report.c - the report page (report.h, docs/report.md): HTML with inline
 * SVG charts drawn here, no script.  Every number a chart or table shows is
 * also in a data- attribute of its element, at full precision, so that a
 * test (or a scraper) reads the page's numbers from the rendered DOM. */
#define _GNU_SOURCE
#include "report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "score.h"

const struct report_ref report_passbench[] = {
	{"eager (PyTorch)", 1.000},
	{"TorchInductor", 0.706},
	{"Claude-Sonnet-4.6", 0.448},
	{"GPT-5.4", 0.410},
};
const int report_n_passbench = (int)(sizeof(report_passbench) / sizeof(report_passbench[0]));

/* ---- text --------------------------------------------------------------------------- */

static void esc(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default: fputc(*s, f);
		}
	}
}

static const char *str(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s ? s : "";
}

/* A number of o[key], NAN when absent, null or not a number. */
static double num(const json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

/* data-NAME="value": full precision, "null" for a missing number. */
static void data_num(FILE *f, const char *name, double v)
{
	if (isfinite(v))
		fprintf(f, " data-%s=\"%.10g\"", name, v);
	else
		fprintf(f, " data-%s=\"null\"", name);
}

/* A number as shown: 3 decimals below 100, else none; an en dash when missing. */
static void show_num(FILE *f, double v)
{
	if (!isfinite(v))
		fputs("&ndash;", f);
	else if (fabs(v) >= 100)
		fprintf(f, "%.0f", v);
	else
		fprintf(f, "%.3f", v);
}

static const char *verdict_color(const char *v)
{
	static const struct {
		const char *name, *color;
	} tab[] = {
		{"ok", "#1a7f37"},           {"mismatch", "#bf8700"}, {"compile_error", "#8250df"},
		{"runtime_error", "#a0522d"}, {"timeout", "#6e7781"}, {"unsupported", "#57606a"},
		{"rejected", "#cf222e"},     {"not_implemented", "#8c959f"},
	};
	for (size_t i = 0; v && i < sizeof(tab) / sizeof(tab[0]); i++)
		if (strcmp(v, tab[i].name) == 0)
			return tab[i].color;
	return "#24292f";
}

static void verdict_badge(FILE *f, const char *v)
{
	fprintf(f, "<span class=\"verdict\" style=\"background:%s\">", verdict_color(v));
	esc(f, v && *v ? v : "none");
	fputs("</span>", f);
}

/* ---- scales ----------------------------------------------------------------------------- */

/* A log10 axis over [lo, hi] mapped onto [y0 (at lo), y1 (at hi)]. */
struct logax {
	double l0, l1, p0, p1;
};

static struct logax logax_make(double lo, double hi, double p0, double p1)
{
	if (!(lo > 0) || !isfinite(lo))
		lo = 0.1;
	if (!(hi > lo) || !isfinite(hi))
		hi = lo * 10;
	struct logax a = {log10(lo), log10(hi), p0, p1};
	return a;
}

static double logax_at(const struct logax *a, double v)
{
	double l = v > 0 ? log10(v) : a->l0;
	if (l < a->l0)
		l = a->l0;
	if (l > a->l1)
		l = a->l1;
	return a->p0 + (a->p1 - a->p0) * (l - a->l0) / (a->l1 - a->l0);
}

/* Ticks of a log axis: 1, 2, 5 per decade, or the decades alone when those are too many. */
static int logax_ticks(const struct logax *a, double *out, int max)
{
	static const double m[] = {1, 2, 5};
	for (int pass = 0; pass < 2; pass++) {
		int n = 0;
		for (int k = (int)floor(a->l0) - 1; k <= (int)ceil(a->l1) + 1; k++)
			for (int j = 0; j < (pass ? 1 : 3); j++) {
				double v = m[j] * pow(10, k), l = log10(v);
				if (l >= a->l0 - 1e-9 && l <= a->l1 + 1e-9 && n < max)
					out[n++] = v;
			}
		if (n <= 7 || pass)
			return n;
	}
	return 0;
}

/* The range of a log chart: the values' and 1's, widened a little. */
static void log_range(const double *v, int n, double extra_lo, double *lo, double *hi)
{
	double a = 1, b = 1;
	if (extra_lo > 0 && extra_lo < a)
		a = extra_lo;
	for (int i = 0; i < n; i++)
		if (isfinite(v[i]) && v[i] > 0) {
			if (v[i] < a)
				a = v[i];
			if (v[i] > b)
				b = v[i];
		}
	*lo = a / 1.4;
	*hi = b * 1.4;
}

#define SVG_FONT "font-family=\"sans-serif\" font-size=\"11\""

/* The frame of a chart: the svg element, the plot area's box, the y axis's ticks and grid. */
static void chart_open(FILE *f, const char *cls, int w, int h, const char *label)
{
	fprintf(f, "<svg class=\"%s\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"", cls, w,
		h, w, h);
	esc(f, label);
	fprintf(f, "\" xmlns=\"http://www.w3.org/2000/svg\" " SVG_FONT ">\n");
}

static void y_log_axis(FILE *f, const struct logax *a, double x0, double x1, const char *title)
{
	double ticks[40];
	int n = logax_ticks(a, ticks, 40);
	for (int i = 0; i < n; i++) {
		double y = logax_at(a, ticks[i]);
		fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#d0d7de\" stroke-width=\"1\"/>", x0, y, x1,
			y);
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" fill=\"#57606a\">%g</text>\n", x0 - 4, y + 4, ticks[i]);
	}
	double y1 = logax_at(a, 1);
	fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#57606a\" stroke-dasharray=\"4 3\"/>", x0, y1, x1,
		y1);
	fprintf(f, "<text x=\"12\" y=\"%.1f\" transform=\"rotate(-90 12 %.1f)\" text-anchor=\"middle\" fill=\"#24292f\">",
		(a->p0 + a->p1) / 2, (a->p0 + a->p1) / 2);
	esc(f, title);
	fputs("</text>\n", f);
}

/* ---- the charts ---------------------------------------------------------------------------- */

/* A line through the finite values of v, value i at x0 + px * i on the log axis
 * (the element, ended by the caller). */
static void polyline(FILE *f, const char *stroke, const char *width, const double *v, size_t n, double x0, double px,
		     const struct logax *a)
{
	fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"%s\" points=\"", stroke, width);
	for (size_t i = 0; i < n; i++)
		if (isfinite(v[i]))
			fprintf(f, "%.1f,%.1f ", x0 + px * (double)i, logax_at(a, v[i]));
	fputs("\"/>", f);
}

/* The score of each history entry (NAN where it has none), malloc'd; NULL
 * when out of memory. */
static double *history_scores(const json_t *hist)
{
	size_t n = json_array_size(hist);
	double *v = calloc(n + 1, sizeof(double));
	for (size_t i = 0; v && i < n; i++)
		v[i] = num(json_array_get(hist, i), "score");
	return v;
}

/* ES_t per tolerance level t, with the levels of weight 1 shaded. */
static void chart_es_t(FILE *f, const json_t *res)
{
	const int W = 360, H = 200, L = 52, R = 10, T = 12, B = 34;
	double v[SCORE_N_T];
	json_t *es = json_object_get(res, "es_t");
	for (int i = 0; i < SCORE_N_T; i++) {
		char key[8];
		snprintf(key, sizeof(key), "%d", SCORE_T_MIN + i);
		v[i] = num(es, key);
	}
	double lo, hi;
	log_range(v, SCORE_N_T, num(res, "b"), &lo, &hi);
	struct logax a = logax_make(lo, hi, H - B, T);
	double px = (double)(W - L - R) / (SCORE_N_T - 1);
	chart_open(f, "chart es_t", W, H, "ES_t per tolerance level");
	/* t = -5..-3 weigh 1 (docs/scoring.md) */
	fprintf(f, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"#ddf4ff\"/>", L + px * 4.5, T, px * 3, H - B - T);
	y_log_axis(f, &a, L, W - R, "ES_t");
	for (int i = 0; i < SCORE_N_T; i += 2)
		fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" fill=\"#57606a\">%d</text>", L + px * i, H - B + 14,
			SCORE_T_MIN + i);
	fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" fill=\"#24292f\">tolerance level t</text>\n",
		L + (W - L - R) / 2.0, H - 4);
	polyline(f, "#0969da", "2", v, SCORE_N_T, L, px, &a);
	fputc('\n', f);
	for (int i = 0; i < SCORE_N_T; i++)
		if (isfinite(v[i])) {
			fprintf(f, "<circle class=\"es_t\" data-t=\"%d\"", SCORE_T_MIN + i);
			data_num(f, "value", v[i]);
			fprintf(f, " cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"#0969da\"><title>t = %d: %.4g</title></circle>\n",
				L + px * i, logax_at(&a, v[i]), SCORE_T_MIN + i, v[i]);
		}
	fputs("</svg>\n", f);
}

/* The variants' speedups side by side: the scored one, and the modeled and
 * measured ones where the result has them. */
static const struct {
	const char *key, *name, *color;
} series[] = {
	{"speedup", "scored", "#0969da"},
	{"modeled_speedup", "modeled", "#fb8500"},
	{"measured_speedup", "measured", "#2da44e"},
};
#define NSERIES 3

static double variant_value(const json_t *var, int s)
{
	return num(var, series[s].key);
}

static void chart_variants(FILE *f, const json_t *vars)
{
	size_t nv = json_array_size(vars);
	if (nv == 0)
		return;
	int used[NSERIES] = {0}, nused = 0;
	double *vals = calloc(nv * NSERIES + 1, sizeof(double));
	if (vals == NULL)
		return;
	for (size_t i = 0; i < nv; i++)
		for (int s = 0; s < NSERIES; s++) {
			double v = variant_value(json_array_get(vars, i), s);
			vals[i * NSERIES + s] = v;
			/* the measured speedup only beside a modeled one (else it is the scored one) */
			if (isfinite(v) && (s != 2 || isfinite(variant_value(json_array_get(vars, i), 1))))
				used[s] = 1;
		}
	for (int s = 0; s < NSERIES; s++)
		nused += used[s];
	const int L = 52, R = 10, T = 22, B = 70, H = 230;
	int gw = nused * 12 + 14, W = L + R + (int)nv * gw;
	if (W < 300)
		W = 300;
	double lo, hi;
	log_range(vals, (int)(nv * NSERIES), 0, &lo, &hi);
	struct logax a = logax_make(lo, hi, H - B, T);
	double pw = (double)(W - L - R) / (double)nv;
	chart_open(f, "chart variants", W, H, "speedup per variant");
	y_log_axis(f, &a, L, W - R, "speedup");
	double y1 = logax_at(&a, 1);
	int lx = L;
	for (int s = 0; s < NSERIES; s++)
		if (used[s]) {
			fprintf(f, "<rect x=\"%d\" y=\"4\" width=\"10\" height=\"10\" fill=\"%s\"/><text x=\"%d\" y=\"13\">%s</text>",
				lx, series[s].color, lx + 13, series[s].name);
			lx += 80;
		}
	fputc('\n', f);
	for (size_t i = 0; i < nv; i++) {
		json_t *var = json_array_get(vars, i);
		double x = L + pw * (double)i + (pw - nused * 12) / 2;
		for (int s = 0; s < NSERIES; s++) {
			if (!used[s])
				continue;
			double v = vals[i * NSERIES + s];
			if (isfinite(v) && v > 0) {
				double y = logax_at(&a, v), top = y < y1 ? y : y1, h = fabs(y - y1);
				fprintf(f, "<rect class=\"bar %s\" data-variant=\"", series[s].name);
				esc(f, str(var, "name"));
				fputc('"', f);
				data_num(f, "value", v);
				fprintf(f, " x=\"%.1f\" y=\"%.1f\" width=\"10\" height=\"%.1f\" fill=\"%s\"><title>", x, top,
					h < 1 ? 1 : h, series[s].color);
				esc(f, str(var, "name"));
				fprintf(f, " %s %.4g</title></rect>", series[s].name, v);
			}
			x += 12;
		}
		double cx = L + pw * (double)i + pw / 2;
		fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"end\" transform=\"rotate(-35 %.1f %d)\" fill=\"#24292f\">", cx,
			H - B + 14, cx, H - B + 14);
		esc(f, str(var, "name"));
		fputs("</text>\n", f);
	}
	fputs("</svg>\n", f);
	free(vals);
}

/* Score over the task's evaluations, each point colored by its verdict. */
static void chart_trajectory(FILE *f, const json_t *hist, double b)
{
	size_t n = json_array_size(hist);
	if (n == 0)
		return;
	const int W = 360, H = 200, L = 52, R = 14, T = 12, B = 34;
	double *v = history_scores(hist);
	if (v == NULL)
		return;
	double lo, hi;
	log_range(v, (int)n, b, &lo, &hi);
	struct logax a = logax_make(lo, hi, H - B, T);
	double px = n > 1 ? (double)(W - L - R) / (double)(n - 1) : 0, x0 = n > 1 ? L : L + (W - L - R) / 2.0;
	chart_open(f, "chart trajectory", W, H, "score over the evaluations");
	y_log_axis(f, &a, L, W - R, "score");
	size_t step = n <= 10 ? 1 : (n + 9) / 10;
	for (size_t i = 0; i < n; i += step)
		fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" fill=\"#57606a\">%lld</text>", x0 + px * (double)i,
			H - B + 14, (long long)json_integer_value(json_object_get(json_array_get(hist, i), "seq")));
	fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" fill=\"#24292f\">evaluation (seq)</text>\n",
		L + (W - L - R) / 2.0, H - 4);
	polyline(f, "#8c959f", "1.5", v, n, x0, px, &a);
	fputc('\n', f);
	for (size_t i = 0; i < n; i++) {
		json_t *p = json_array_get(hist, i);
		const char *verdict = str(p, "verdict");
		int rerun = json_is_true(json_object_get(p, "rerun"));
		double y = isfinite(v[i]) ? logax_at(&a, v[i]) : H - B;
		fprintf(f, "<circle class=\"traj\" data-seq=\"%lld\"", (long long)json_integer_value(json_object_get(p, "seq")));
		data_num(f, "score", v[i]);
		fprintf(f, " data-verdict=\"");
		esc(f, verdict);
		fprintf(f, "\" cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\" stroke=\"%s\" stroke-width=\"2\"><title>seq %lld: ",
			x0 + px * (double)i, y, rerun ? "#ffffff" : verdict_color(verdict), verdict_color(verdict),
			(long long)json_integer_value(json_object_get(p, "seq")));
		esc(f, *verdict ? verdict : "no verdict");
		if (isfinite(v[i]))
			fprintf(f, ", %.4g", v[i]);
		if (rerun)
			fputs(" (rerun)", f);
		fputs("</title></circle>\n", f);
	}
	fputs("</svg>\n", f);
	free(v);
}

/* A small trajectory in the task table. */
static void sparkline(FILE *f, const json_t *hist, double b)
{
	size_t n = json_array_size(hist);
	const int W = 110, H = 22;
	double *v = n ? history_scores(hist) : NULL;
	if (v == NULL)
		return;
	double lo, hi;
	log_range(v, (int)n, b, &lo, &hi);
	struct logax a = logax_make(lo, hi, H - 3, 3);
	double px = n > 1 ? (double)(W - 6) / (double)(n - 1) : 0;
	fprintf(f, "<svg class=\"spark\" width=\"%d\" height=\"%d\" xmlns=\"http://www.w3.org/2000/svg\">", W, H);
	fprintf(f, "<line x1=\"0\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#d0d7de\"/>", W, logax_at(&a, 1), logax_at(&a, 1));
	polyline(f, "#0969da", "1.5", v, n, 3, px, &a);
	fputs("</svg>", f);
	free(v);
}

/* The aggregate beside PassBench's published rows, as horizontal bars. */
static void chart_aggregate(FILE *f, double agg, double agg_all, const char *label_agg, const char *label_all)
{
	int nrows = 2 + report_n_passbench;
	const int L = 250, R = 60, T = 8, RH = 22, W = 640, H = T + nrows * RH + 24;
	double max = 1.2;
	if (isfinite(agg) && agg * 1.1 > max)
		max = agg * 1.1;
	if (isfinite(agg_all) && agg_all * 1.1 > max)
		max = agg_all * 1.1;
	double sx = (W - L - R) / max;
	chart_open(f, "chart aggregate", W, H, "the aggregate beside PassBench's published rows");
	for (int r = 0; r < nrows; r++) {
		double v;
		const char *name, *color = r < 2 ? "#0969da" : "#8c959f";
		char buf[160];
		if (r == 0) {
			v = agg;
			name = label_agg;
		} else if (r == 1) {
			v = agg_all;
			name = label_all;
		} else {
			v = report_passbench[r - 2].aggregate;
			snprintf(buf, sizeof(buf), "PassBench paper (A30): %s", report_passbench[r - 2].name);
			name = buf;
		}
		int y = T + r * RH;
		fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">", L - 6, y + 15);
		esc(f, name);
		fputs("</text>", f);
		if (isfinite(v)) {
			fprintf(f, "<rect class=\"agg-bar\" data-row=\"%d\"", r);
			data_num(f, "value", v);
			fprintf(f, " x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"16\" fill=\"%s\"/>", L, y + 3, v * sx, color);
			fprintf(f, "<text x=\"%.1f\" y=\"%d\">%.3f</text>\n", L + v * sx + 4, y + 15, v);
		} else {
			fprintf(f, "<text x=\"%d\" y=\"%d\" fill=\"#57606a\">none yet</text>\n", L + 4, y + 15);
		}
	}
	double x1 = L + sx;
	fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" stroke=\"#57606a\" stroke-dasharray=\"4 3\"/>", x1, x1, T,
		T + nrows * RH);
	fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" fill=\"#57606a\">1 = eager</text>\n", x1, H - 6);
	fputs("</svg>\n", f);
}

/* ---- the page ---------------------------------------------------------------------------- */

/* Which backend and which speedup the results scored: one phrase per kind,
 * with how many tasks each holds. */
static void backend_label(FILE *f, const json_t *gtasks)
{
	struct {
		char label[200];
		int n;
	} kinds[8];
	int nk = 0;
	for (size_t i = 0; i < json_array_size(gtasks); i++) {
		json_t *res = json_object_get(json_array_get(gtasks, i), "result");
		if (!json_is_object(res) || !json_is_string(json_object_get(res, "backend")))
			continue;
		char label[200];
		const char *backend = str(res, "backend"), *scoring = str(res, "scoring");
		if (strcmp(backend, "cpu") == 0 && strncmp(scoring, "modeled_h200", 12) == 0)
			snprintf(label, sizeof(label), "cpu backend: speedups of modeled H200 times");
		else if (strcmp(backend, "cpu") == 0)
			snprintf(label, sizeof(label), "cpu backend: speedups measured on this CPU (emulated CUDA)");
		else
			snprintf(label, sizeof(label), "%s backend: speedups measured on %s", backend,
				 *str(res, "device") ? str(res, "device") : "its GPU");
		int k = 0;
		while (k < nk && strcmp(kinds[k].label, label) != 0)
			k++;
		if (k == nk) {
			if (nk == 8)
				continue;
			snprintf(kinds[nk].label, sizeof(kinds[nk].label), "%s", label);
			kinds[nk++].n = 0;
		}
		kinds[k].n++;
	}
	if (nk == 0) {
		fputs("no results yet", f);
		return;
	}
	for (int k = 0; k < nk; k++) {
		if (k)
			fputs("; ", f);
		esc(f, kinds[k].label);
		if (nk > 1)
			fprintf(f, " (%d task%s)", kinds[k].n, kinds[k].n == 1 ? "" : "s");
	}
}

/* A table row of one note under a row: an empty first cell, then the
 * prefix and the text across span cells. */
static void note_row(FILE *f, const char *cls, int span, const char *prefix, const char *text)
{
	fprintf(f, "<tr class=\"%s\"><td></td><td colspan=\"%d\">%s", cls, span, prefix);
	esc(f, text);
	fputs("</td></tr>\n", f);
}

static const json_t *find_gathered(const json_t *gtasks, const char *id)
{
	for (size_t i = 0; i < json_array_size(gtasks); i++) {
		json_t *t = json_array_get(gtasks, i);
		if (strcmp(str(t, "id"), id) == 0)
			return t;
	}
	return NULL;
}

static void variants_table(FILE *f, const json_t *vars)
{
	fputs("<table class=\"variants\"><thead><tr><th>variant</th><th>dtype</th><th>verdict</th><th>min_t</th>"
	      "<th>speedup (scored)</th><th>scored from</th><th>modeled</th><th>measured</th>"
	      "<th>eager, modeled ms</th><th>pass, modeled ms</th><th>model spread</th></tr></thead><tbody>\n",
	      f);
	for (size_t i = 0; i < json_array_size(vars); i++) {
		json_t *v = json_array_get(vars, i), *mh = json_object_get(v, "modeled_h200_ms");
		double sp = num(v, "speedup"), mo = num(v, "modeled_speedup"), me = num(v, "measured_speedup");
		json_t *mt = json_object_get(v, "min_t");
		fputs("<tr class=\"variant\" data-variant=\"", f);
		esc(f, str(v, "name"));
		fputs("\" data-verdict=\"", f);
		esc(f, str(v, "verdict"));
		fputc('"', f);
		data_num(f, "speedup", sp);
		data_num(f, "modeled", mo);
		data_num(f, "measured", me);
		fputs("><td>", f);
		esc(f, str(v, "name"));
		fputs("</td><td>", f);
		esc(f, str(v, "dtype"));
		fputs("</td><td>", f);
		verdict_badge(f, str(v, "verdict"));
		fputs("</td><td>", f);
		if (json_is_integer(mt))
			fprintf(f, "%lld", (long long)json_integer_value(mt));
		else
			fputs("&ndash;", f);
		fputs("</td><td class=\"n\">", f);
		show_num(f, sp);
		fputs("</td><td>", f);
		esc(f, str(v, "speedup_source"));
		fputs("</td><td class=\"n\">", f);
		show_num(f, mo);
		fputs("</td><td class=\"n\">", f);
		show_num(f, me);
		fputs("</td><td class=\"n\">", f);
		double e = num(mh, "eager"), p = num(mh, "pass");
		if (isfinite(e))
			fprintf(f, "%.4g", e);
		else
			fputs("&ndash;", f);
		fputs("</td><td class=\"n\">", f);
		if (isfinite(p))
			fprintf(f, "%.4g", p);
		else
			fputs("&ndash;", f);
		/* how closely the pass's timed counted calls agreed (result-format.md, model_spread) */
		double spread = num(json_object_get(v, "model_spread"), "spread");
		fputs("</td><td class=\"n\">", f);
		if (isfinite(spread))
			fprintf(f, "%.1f%%", spread * 100);
		else
			fputs("&ndash;", f);
		fputs("</td></tr>\n", f);
		if (*str(v, "message"))
			note_row(f, "vmsg", 10, "", str(v, "message"));
	}
	fputs("</tbody></table>\n", f);
}

static void task_section(FILE *f, const json_t *row, const json_t *g, double b)
{
	const char *id = str(row, "id");
	json_t *res = json_object_get(g, "result"), *hist = json_object_get(g, "history");
	fputs("<section class=\"task\" id=\"task-", f);
	esc(f, id);
	fputs("\" data-task=\"", f);
	esc(f, id);
	fputs("\"><h3>", f);
	esc(f, id);
	fputs(" ", f);
	const json_t *head = json_is_object(res) ? res : row; /* without a result: the summary's row */
	verdict_badge(f, str(head, "verdict"));
	fputs(" <span class=\"score\">", f);
	show_num(f, num(head, "score"));
	fputs("</span></h3>\n<p class=\"msg\">", f);
	esc(f, str(res, "message"));
	fputs("</p>\n<p class=\"meta\">", f);
	if (json_is_object(res))
		fprintf(f, "seq %lld", (long long)json_integer_value(json_object_get(res, "seq")));
	if (*str(res, "time")) {
		fputs(", ", f);
		esc(f, str(res, "time"));
	}
	if (*str(res, "device")) {
		fputs(", ", f);
		esc(f, str(res, "device"));
	}
	if (isfinite(num(res, "modeled_speedup")))
		fprintf(f, ", modeled speedup %.3f", num(res, "modeled_speedup"));
	if (!json_is_object(res) && *str(g, "result_error")) {
		fputs(" result.json unreadable: ", f);
		esc(f, str(g, "result_error"));
	}
	fputs("</p>\n<div class=\"charts\">", f);
	if (json_is_object(res))
		chart_es_t(f, res);
	chart_trajectory(f, hist, b);
	fputs("</div>\n", f);
	json_t *vars = json_object_get(res, "variants");
	chart_variants(f, vars);
	if (json_is_object(res))
		variants_table(f, vars);
	if (json_integer_value(json_object_get(g, "history_skipped")) > 0)
		fprintf(f, "<p class=\"meta\">%lld history entr%s could not be read and %s left out.</p>\n",
			(long long)json_integer_value(json_object_get(g, "history_skipped")),
			json_integer_value(json_object_get(g, "history_skipped")) == 1 ? "y" : "ies",
			json_integer_value(json_object_get(g, "history_skipped")) == 1 ? "is" : "are");
	fputs("</section>\n", f);
}

static const char CSS[] =
	"body{font-family:sans-serif;margin:24px;color:#24292f;max-width:1200px}"
	"h1{margin:0 0 4px}h2{margin:28px 0 8px;border-bottom:1px solid #d0d7de}"
	"h3{margin:22px 0 4px}.meta{color:#57606a;margin:2px 0}.msg{margin:4px 0}"
	"table{border-collapse:collapse;margin:8px 0}td,th{padding:3px 8px;border-bottom:1px solid #eaeef2;text-align:left}"
	"th{background:#f6f8fa}td.n{text-align:right;font-variant-numeric:tabular-nums}"
	".verdict{color:#fff;border-radius:8px;padding:1px 7px;font-size:12px}"
	".score{font-variant-numeric:tabular-nums}.charts{display:flex;flex-wrap:wrap;gap:16px}"
	"tr.vmsg td{color:#57606a;font-size:12px}";

char *report_html(const json_t *summary, const json_t *gathered, const char *source, size_t *len)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	if (f == NULL)
		return NULL;
	json_t *rows = json_object_get(summary, "tasks"), *gtasks = json_object_get(gathered, "tasks");
	double b = num(summary, "b");
	if (!isfinite(b))
		b = SCORE_DEFAULT_B;
	double agg = num(summary, "aggregate"), agg_all = num(summary, "aggregate_all");
	size_t ntasks = json_array_size(rows);
	long long nevals = 0;
	for (size_t i = 0; i < json_array_size(gtasks); i++)
		nevals += (long long)json_array_size(json_object_get(json_array_get(gtasks, i), "history"));
	long long evaluated = json_integer_value(json_object_get(summary, "evaluated"));

	fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
		   "<meta name=\"viewport\" content=\"width=device-width\"><title>passfs report</title>"
		   "<style>%s</style></head><body>\n",
		CSS);
	fputs("<h1>passfs report</h1>\n<p class=\"meta\" id=\"backend\">", f);
	backend_label(f, gtasks);
	fprintf(f, "</p>\n<p class=\"meta\">%zu task%s, <span id=\"evaluated\" data-value=\"%lld\">%lld</span> evaluated, "
		   "<span id=\"evaluations\" data-value=\"%lld\">%lld</span> evaluation%s in the history; b = %g. From ",
		ntasks, ntasks == 1 ? "" : "s", evaluated, evaluated, nevals, nevals, nevals == 1 ? "" : "s", b);
	esc(f, source);
	fputs(".</p>\n", f);

	/* the aggregate */
	fputs("<h2>Benchmark aggregate</h2>\n<table class=\"aggregate\"><tbody>"
	      "<tr><th>aggregate (geometric mean of the evaluated tasks' scores)</th><td class=\"n\" id=\"aggregate\"",
	      f);
	data_num(f, "value", agg);
	fputc('>', f);
	show_num(f, agg);
	fprintf(f, "</td></tr><tr><th>aggregate_all (every task, unevaluated ones counted as b = %g)</th>"
		   "<td class=\"n\" id=\"aggregate_all\"",
		b);
	data_num(f, "value", agg_all);
	fputc('>', f);
	show_num(f, agg_all);
	fputs("</td></tr></tbody></table>\n", f);
	char la[96], lall[96];
	snprintf(la, sizeof(la), "passfs: %lld evaluated task%s", evaluated, evaluated == 1 ? "" : "s");
	snprintf(lall, sizeof(lall), "passfs: all %zu task%s", ntasks, ntasks == 1 ? "" : "s");
	chart_aggregate(f, agg, agg_all, la, lall);
	fputs("<p class=\"meta\">PassBench's rows are the PassNet paper's, measured on an A30 GPU with b = 0.1 over its "
	      "own task set: beside them the aggregate is a guide, not a ranking. Eager scores exactly 1 by "
	      "construction.</p>\n",
	      f);

	/* the tasks */
	fputs("<h2>Tasks</h2>\n<table class=\"tasks\"><thead><tr><th>task</th><th>state</th><th>verdict</th><th>score</th>"
	      "<th>seq</th><th>evaluations</th><th>trajectory</th></tr></thead><tbody>\n",
	      f);
	for (size_t i = 0; i < ntasks; i++) {
		json_t *row = json_array_get(rows, i);
		const char *id = str(row, "id");
		const json_t *g = find_gathered(gtasks, id);
		json_t *hist = json_object_get(g, "history");
		int has_result = json_is_object(json_object_get(g, "result")) || json_array_size(hist) > 0;
		fputs("<tr class=\"task-row\" data-task=\"", f);
		esc(f, id);
		fputs("\" data-state=\"", f);
		esc(f, str(row, "state"));
		fputs("\" data-verdict=\"", f);
		esc(f, json_is_string(json_object_get(row, "verdict")) ? str(row, "verdict") : "null");
		fputc('"', f);
		data_num(f, "score", num(row, "score"));
		fprintf(f, " data-seq=\"%lld\" data-evaluations=\"%zu\"><td>",
			(long long)json_integer_value(json_object_get(row, "seq")), json_array_size(hist));
		if (has_result) {
			fputs("<a href=\"#task-", f);
			esc(f, id);
			fputs("\">", f);
		}
		esc(f, id);
		fputs(has_result ? "</a></td><td>" : "</td><td>", f);
		esc(f, str(row, "state"));
		fputs("</td><td>", f);
		if (json_is_string(json_object_get(row, "verdict")))
			verdict_badge(f, str(row, "verdict"));
		fputs("</td><td class=\"n\">", f);
		show_num(f, num(row, "score"));
		fprintf(f, "</td><td class=\"n\">%lld</td><td class=\"n\">%zu</td><td>",
			(long long)json_integer_value(json_object_get(row, "seq")), json_array_size(hist));
		sparkline(f, hist, b);
		fputs("</td></tr>\n", f);
		if (*str(g, "result_error"))
			note_row(f, "vmsg", 6, "result.json unreadable: ", str(g, "result_error"));
	}
	fputs("</tbody></table>\n", f);

	/* one section per task with a result */
	fputs("<h2>Per task</h2>\n<p class=\"meta\">ES_t: the task's score at each tolerance level t (shaded: the levels "
	      "weighted 1; docs/scoring.md). Speedups per variant: the scored one and, on the cpu backend, the modeled "
	      "H200 one and the one measured on this machine (log scale, 1 = eager). Trajectory: the score of every "
	      "evaluation in the history, colored by verdict; hollow points are reruns.</p>\n",
	      f);
	for (size_t i = 0; i < ntasks; i++) {
		json_t *row = json_array_get(rows, i);
		const json_t *g = find_gathered(gtasks, str(row, "id"));
		if (g && (json_is_object(json_object_get(g, "result")) || json_array_size(json_object_get(g, "history")) > 0))
			task_section(f, row, g, b);
	}
	fputs("</body></html>\n", f);
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	if (len)
		*len = n;
	return buf;
}
