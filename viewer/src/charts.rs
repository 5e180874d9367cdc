//! The report's charts, drawn with plotters on a canvas from the Report's chart data
//! (`analyzer::insights::charts`), and several runs' charts overlaid (`analyzer::compare`):
//! nothing is computed here but pixels. Long series are reduced per pixel column
//! (`analyzer::insights::reduce::runs`). Each chart reads out by hovering or by the arrow
//! keys (Shift: 10 steps; Home/End; Escape closes), and has its data table.

use std::sync::Arc;

use analyzer::compare::Overlay;
use analyzer::insights::charts::{BarChart, TimeChart};
use analyzer::insights::reduce;
use leptos::prelude::*;
use plotters::coord::ranged1d::{IntoSegmentedCoord, SegmentValue};
use plotters::prelude::*;
use plotters_canvas::CanvasBackend;
use wasm_bindgen::JsCast;

use crate::dom::document;
use crate::phase_bands::PhaseWindows;
use crate::reduce::{nearest, table_rows};

/// Rows a data table shows at most (a 24-hour recording has 345,600 samples).
const TABLE_ROWS: usize = 2_000;
const WIDTH: u32 = 880;
const HEIGHT: u32 = 300;

/// Chart colours, from the page's CSS custom properties (so both themes apply).
pub(crate) struct Palette {
    pub bg: RGBColor,
    pub fg: RGBColor,
    pub grid: RGBColor,
    pub lines: [RGBColor; 4],
    pub marker: RGBColor,
    pub reference: RGBColor,
}

fn css_colour(style: &web_sys::CssStyleDeclaration, name: &str, fallback: RGBColor) -> RGBColor {
    let v = style.get_property_value(name).unwrap_or_default();
    let v = v.trim().trim_start_matches('#');
    if v.len() == 6 {
        if let Ok(n) = u32::from_str_radix(v, 16) {
            return RGBColor((n >> 16) as u8, (n >> 8) as u8, n as u8);
        }
    }
    fallback
}

pub(crate) fn palette() -> Palette {
    let el = document().document_element();
    let style =
        el.and_then(|e| web_sys::window().and_then(|w| w.get_computed_style(&e).ok().flatten()));
    let Some(s) = style else {
        return Palette {
            bg: WHITE,
            fg: BLACK,
            grid: RGBColor(220, 220, 220),
            lines: [BLUE, RED, GREEN, MAGENTA],
            marker: RED,
            reference: BLACK,
        };
    };
    Palette {
        bg: css_colour(&s, "--chart-bg", WHITE),
        fg: css_colour(&s, "--fg", BLACK),
        grid: css_colour(&s, "--grid", RGBColor(220, 220, 220)),
        lines: [
            css_colour(&s, "--line-1", BLUE),
            css_colour(&s, "--line-2", RED),
            css_colour(&s, "--line-3", GREEN),
            css_colour(&s, "--line-4", MAGENTA),
        ],
        marker: css_colour(&s, "--marker", RED),
        reference: css_colour(&s, "--reference", BLACK),
    }
}

/// Where the plot landed on the canvas, to map pointer positions back to data.
#[derive(Clone, Copy, Debug, Default)]
struct Geom {
    px0: f64,
    px1: f64,
    x0: f64,
    x1: f64,
}

impl Geom {
    fn to_px(self, x: f64) -> f64 {
        self.px0 + (x - self.x0) / (self.x1 - self.x0) * (self.px1 - self.px0)
    }
    fn to_x(self, px: f64) -> f64 {
        self.x0 + (px - self.px0) / (self.px1 - self.px0) * (self.x1 - self.x0)
    }
}

/// A round top for a y axis.
pub(crate) fn nice(max: f64) -> f64 {
    if max <= 0.0 || !max.is_finite() {
        return 1.0;
    }
    let m = max * 1.08;
    let p = 10f64.powf(m.log10().floor());
    for k in [1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0] {
        if k * p >= m {
            return k * p;
        }
    }
    10.0 * p
}

pub(crate) fn fmt(v: f64, decimals: usize) -> String {
    let s = format!("{v:.decimals$}");
    // Thousands separators on the whole part.
    let (sign, rest) = s.strip_prefix('-').map_or(("", s.as_str()), |r| ("-", r));
    let (int, frac) = rest
        .split_once('.')
        .map_or((rest, None), |(a, b)| (a, Some(b)));
    let mut out = String::new();
    for (i, ch) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    match frac {
        Some(f) => format!("{sign}{out}.{f}"),
        None => format!("{sign}{out}"),
    }
}

/// The axes of a chart over time: seconds on x from `x.0` to `x.1`, 0 to `y1` on y, the
/// two axis descriptions; with where the plot sits in pixels and how many pixel columns
/// it has (the resolution long series are reduced to).
fn time_axes<'a>(
    root: &'a DrawingArea<CanvasBackend, plotters::coord::Shift>,
    x: (f64, f64),
    y1: f64,
    (x_desc, y_desc): (&str, &str),
    p: &Palette,
) -> Option<(TimeArea<'a>, Geom, usize)> {
    let font = label_font(p);
    let mut ch = ChartBuilder::on(root)
        .margin(12)
        .margin_right(24)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(x.0..x.1, 0f64..y1)
        .ok()?;
    ch.configure_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc)
        .label_style(font.clone())
        .axis_desc_style(font)
        .axis_style(p.fg)
        .bold_line_style(p.grid)
        .light_line_style(p.bg)
        .x_labels(8)
        .y_labels(6)
        .x_label_formatter(&|v| fmt(*v, 0))
        .y_label_formatter(&|v| fmt(*v, if y1 >= 5.0 { 0 } else { 1 }))
        .draw()
        .ok()?;
    let (xr, _) = ch.plotting_area().get_pixel_range();
    let geom = Geom {
        px0: f64::from(xr.start),
        px1: f64::from(xr.end),
        x0: x.0,
        x1: x.1,
    };
    Some((ch, geom, (xr.end - xr.start).max(1) as usize))
}

type TimeArea<'a> = ChartContext<
    'a,
    CanvasBackend,
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
>;

/// The top of a time chart's y axis: the fixed one, else a round number above the data.
fn y_top(fixed: Option<f64>, values: impl Iterator<Item = f64>) -> f64 {
    fixed.unwrap_or_else(|| nice(values.filter(|v| v.is_finite()).fold(0.0f64, f64::max)))
}

/// The text style of axes and legends.
pub(crate) fn label_font(p: &Palette) -> TextStyle<'static> {
    ("sans-serif", 13).into_font().color(&p.fg)
}

/// A step line's corners: each value held until the next sample.
fn step_points(run: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut pts = Vec::with_capacity(run.len() * 2);
    for (i, &(x, y)) in run.iter().enumerate() {
        if i > 0 {
            pts.push((x, run[i - 1].1));
        }
        pts.push((x, y));
    }
    pts
}

fn draw_time(
    canvas: &web_sys::HtmlCanvasElement,
    c: &TimeChart,
    phases: &PhaseWindows,
) -> Option<Geom> {
    let p = palette();
    let backend = CanvasBackend::with_canvas_object(canvas.clone())?;
    let root = backend.into_drawing_area();
    root.fill(&p.bg).ok()?;
    let x0 = *c.t.first()?;
    let x1 = c.t.last().copied().filter(|&x| x > x0).unwrap_or(x0 + 1.0);
    let y1 = y_top(
        c.y_max,
        c.lines
            .iter()
            .flat_map(|l| l.values.iter().flatten().copied())
            .chain(c.reference.as_ref().map(|r| r.0)),
    );
    let (mut ch, geom, columns) = time_axes(
        &root,
        (x0, x1),
        y1,
        ("seconds since the first reading", &c.y_label),
        &p,
    )?;
    if !c.bands.is_empty() {
        // Shaded stretches (T16's throttle episodes), under the lines.
        let shade = p.marker.mix(0.18).filled();
        let rects = c.bands.iter().map(|b| {
            let (from, to) = (b.from.max(x0), b.to.min(x1));
            Rectangle::new([(from, 0.0), (to.max(from), y1)], shade)
        });
        if let Ok(a) = ch.draw_series(rects) {
            a.label("throttled")
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 18, y + 5)], shade));
        }
    }
    // A sweep's phases shaded under the lines, alternately darker so neighbours part.
    let shade = p.reference.mix(0.12).filled();
    let rects = phases.0.iter().enumerate().map(|(i, (from, to, _))| {
        let style = p.reference.mix(if i % 2 == 0 { 0.12 } else { 0.24 });
        let (from, to) = (from.max(x0), to.min(x1));
        Rectangle::new([(from, 0.0), (to.max(from), y1)], style.filled())
    });
    if let Ok(a) = ch.draw_series(rects) {
        if !phases.0.is_empty() {
            a.label("phases")
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 18, y + 5)], shade));
        }
    }
    for (k, line) in c.lines.iter().enumerate() {
        let colour = p.lines[k % p.lines.len()];
        let style = colour.stroke_width(2);
        let runs = reduce::runs(&c.t, &line.values, x0, x1, columns);
        let mut first = true;
        for run in runs {
            let anno = match line.kind.as_str() {
                "area" => {
                    ch.draw_series(AreaSeries::new(run, 0.0, colour.mix(0.25)).border_style(style))
                }
                "step" => ch.draw_series(LineSeries::new(step_points(&run), style)),
                _ => ch.draw_series(LineSeries::new(run, style)),
            };
            if let (Ok(a), true) = (anno, first) {
                a.label(line.label.as_str()).legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 18, y)], colour.stroke_width(3))
                });
                first = false;
            }
        }
    }
    if let Some((r, label)) = &c.reference {
        let rs = p.reference.stroke_width(1);
        if let Ok(a) = ch.draw_series(DashedLineSeries::new(vec![(x0, *r), (x1, *r)], 6, 4, rs)) {
            let colour = p.reference;
            a.label(label.as_str()).legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 18, y)], colour.stroke_width(1))
            });
        }
    }
    if !c.markers.is_empty() {
        // One mark per pixel column at most.
        let mut last_px = i32::MIN;
        let mut marks = Vec::new();
        for m in &c.markers {
            let px = geom.to_px(m.t) as i32;
            if px != last_px {
                marks.push(m.t);
                last_px = px;
            }
        }
        let colour = p.marker;
        if let Ok(a) = ch.draw_series(
            marks
                .into_iter()
                .map(move |t| TriangleMarker::new((t, y1 * 0.96), 6, colour.filled())),
        ) {
            a.label("preemption marks")
                .legend(move |(x, y)| TriangleMarker::new((x + 9, y), 5, colour.filled()));
        }
    }
    ch.configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(p.bg.mix(0.85))
        .border_style(p.grid)
        .label_font(label_font(&p))
        .draw()
        .ok()?;
    root.present().ok()?;
    Some(geom)
}

fn draw_bars(canvas: &web_sys::HtmlCanvasElement, c: &BarChart) -> Option<Geom> {
    let p = palette();
    let backend = CanvasBackend::with_canvas_object(canvas.clone())?;
    let root = backend.into_drawing_area();
    root.fill(&p.bg).ok()?;
    let n = c.bars.len();
    if n == 0 {
        return None;
    }
    let max = c.bars.iter().map(|b| b.1).fold(0.0f64, f64::max);
    let y1 = nice(max);
    let font = label_font(&p);
    let labels: Vec<String> = c.bars.iter().map(|b| b.0.clone()).collect();
    let mut ch = ChartBuilder::on(&root)
        .margin(12)
        .margin_right(24)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d((0..n).into_segmented(), 0f64..y1)
        .ok()?;
    ch.configure_mesh()
        .disable_x_mesh()
        .x_labels(n)
        .x_label_formatter(&|v| match v {
            SegmentValue::CenterOf(i) | SegmentValue::Exact(i) => {
                labels.get(*i).cloned().unwrap_or_default()
            }
            SegmentValue::Last => String::new(),
        })
        .y_desc(c.unit.as_str())
        .y_label_formatter(&|v| fmt(*v, if y1 >= 5.0 { 0 } else { 1 }))
        .label_style(font.clone())
        .axis_desc_style(font)
        .axis_style(p.fg)
        .bold_line_style(p.grid)
        .light_line_style(p.bg)
        .draw()
        .ok()?;
    let colour = p.lines[0];
    ch.draw_series(
        Histogram::vertical(&ch)
            .style(colour.filled())
            .margin(if n > 12 { 2 } else { 12 })
            .data(c.bars.iter().enumerate().map(|(i, b)| (i, b.1))),
    )
    .ok()?;
    let (xr, _) = ch.plotting_area().get_pixel_range();
    root.present().ok()?;
    Some(Geom {
        px0: f64::from(xr.start),
        px1: f64::from(xr.end),
        x0: 0.0,
        x1: n as f64,
    })
}

/// Canvas x for a pointer event (the canvas is scaled by CSS).
fn canvas_x(canvas: &web_sys::HtmlCanvasElement, ev: &web_sys::MouseEvent) -> f64 {
    let rect = canvas.get_bounding_client_rect();
    let css = f64::from(ev.client_x()) - rect.left();
    if rect.width() > 0.0 {
        css * f64::from(canvas.width()) / rect.width()
    } else {
        css
    }
}

/// The arrow-key rule: the next index, or None to close the readout.
fn step(key: &str, shift: bool, at: Option<usize>, n: usize) -> Option<Option<usize>> {
    if n == 0 {
        return None;
    }
    let by = if shift { 10 } else { 1 };
    Some(match key {
        "ArrowRight" | "ArrowUp" => Some(at.map_or(0, |i| (i + by).min(n - 1))),
        "ArrowLeft" | "ArrowDown" => Some(at.map_or(n - 1, |i| i.saturating_sub(by))),
        "Home" => Some(0),
        "End" => Some(n - 1),
        "Escape" => None,
        _ => return None,
    })
}

/// The folded data table, built only when opened (a long run has many rows).
#[component]
fn DataTable(
    head: Vec<String>,
    rows: Arc<dyn Fn() -> (Vec<Vec<String>>, usize) + Send + Sync>,
    /// Said above the table: the chart's data was reduced, from how many samples.
    reduced: Option<String>,
) -> impl IntoView {
    let open = RwSignal::new(false);
    view! {
        <details class="data" on:toggle=move |ev: web_sys::Event| {
            if let Some(d) = ev.target().and_then(|t| t.dyn_into::<web_sys::HtmlDetailsElement>().ok()) {
                open.set(d.open());
            }
        }>
            <summary>"Data table"</summary>
            {move || {
                open.get()
                    .then(|| {
                        let (rows, step) = rows();
                        view! {
                            {reduced.clone().map(|r| view! { <p class="note">{r}</p> })}
                            {(step > 1).then(|| view! {
                                <p class="note">"Every "{step}"th reading of "{fmt((rows.len() as f64 - 1.0) * step as f64, 0)}"+ is shown, and the last."</p>
                            })}
                            <div class="table-wrap">
                                <table>
                                    <thead><tr>{head.iter().map(|h| view! { <th scope="col">{h.clone()}</th> }).collect_view()}</tr></thead>
                                    <tbody>
                                        {rows.into_iter().map(|r| view! {
                                            <tr>{r.into_iter().map(|c| view! { <td>{c}</td> }).collect_view()}</tr>
                                        }).collect_view()}
                                    </tbody>
                                </table>
                            </div>
                        }
                    })
            }}
        </details>
    }
}

/// The figure around a chart's canvas, shared by every chart: title, the canvas with its
/// hover and keyboard readout, caption, and the folded data table.
struct Figure<S, R, M, K> {
    key: String,
    title: String,
    caption: String,
    points: usize,
    canvas: NodeRef<leptos::html::Canvas>,
    cursor: RwSignal<Option<usize>>,
    cursor_style: S,
    readout: R,
    on_move: M,
    on_key: K,
    head: Vec<String>,
    rows: Arc<dyn Fn() -> (Vec<Vec<String>>, usize) + Send + Sync>,
    /// The data table's note when the chart's data was reduced.
    reduced: Option<String>,
    /// Where the replay's moment falls on a time chart (`crate::replay_cursor`).
    replay_cursor: Option<Arc<dyn Fn() -> String + Send + Sync>>,
}

impl<S, R, M, K> Figure<S, R, M, K>
where
    S: Fn() -> String + Send + Sync + 'static,
    R: Fn() -> String + Send + Sync + 'static,
    M: Fn(web_sys::MouseEvent) + 'static,
    K: Fn(web_sys::KeyboardEvent) + 'static,
{
    fn into_view(self) -> impl IntoView {
        let Figure {
            key,
            title,
            caption,
            points,
            canvas,
            cursor,
            cursor_style,
            readout,
            on_move,
            on_key,
            head,
            rows,
            reduced,
            replay_cursor,
        } = self;
        let description = format!("{title}. {caption}");
        view! {
            <figure class="chart" data-chart=key.clone() data-points=points.to_string()>
                <h3>{title}</h3>
                <div class="plot">
                    <canvas
                        node_ref=canvas
                        width=WIDTH
                        height=HEIGHT
                        tabindex="0"
                        role="img"
                        aria-label=description
                        aria-describedby=format!("{key}-readout")
                        on:mousemove=on_move
                        on:mouseleave=move |_| cursor.set(None)
                        on:keydown=on_key
                        on:blur=move |_| cursor.set(None)
                    ></canvas>
                    <div class="cursor" aria-hidden="true" style=cursor_style></div>
                    {replay_cursor.map(|style| view! {
                        <div class="cursor replay-cursor" aria-hidden="true" style=move || style()></div>
                    })}
                </div>
                <p class="readout" id=format!("{key}-readout") aria-live="polite" data-open=move || cursor.get().is_some().to_string()>
                    {readout}
                </p>
                <figcaption>{caption}</figcaption>
                <DataTable head=head rows=rows reduced=reduced />
            </figure>
        }
    }
}

/// A canvas redrawn whenever the theme changes, the geometry of its last drawing (for the
/// cursor), and the cursor's sample. The figure's parent says whether it was drawn.
fn drawn_canvas(
    theme: RwSignal<u32>,
    draw: impl Fn(&web_sys::HtmlCanvasElement) -> Option<Geom> + 'static,
) -> (
    NodeRef<leptos::html::Canvas>,
    StoredValue<Option<Geom>>,
    RwSignal<Option<usize>>,
) {
    let canvas = NodeRef::<leptos::html::Canvas>::new();
    let geom = StoredValue::new(None::<Geom>);
    Effect::new(move |_| {
        theme.track();
        if let Some(c) = canvas.get() {
            let g = draw(&c);
            geom.set_value(g);
            if let Some(el) = c.parent_element() {
                let _ = el.set_attribute("data-drawn", if g.is_some() { "yes" } else { "no" });
            }
        }
    });
    (canvas, geom, RwSignal::new(None::<usize>))
}

#[component]
pub fn TimeChartView(chart: Arc<TimeChart>, theme: RwSignal<u32>) -> impl IntoView {
    let n = chart.t.len();
    let phases = crate::phase_bands::current();
    let (canvas, geom, cursor) = {
        let (chart, phases) = (chart.clone(), phases.clone());
        drawn_canvas(theme, move |c| draw_time(c, &chart, &phases))
    };
    let readout = {
        let chart = chart.clone();
        move || -> String {
            let Some(i) = cursor.get() else {
                return "Hover over the chart, or focus it and use the arrow keys (Shift: 10 steps, Escape: close), to read the values.".to_string();
            };
            let t = chart.t[i];
            let mut parts = vec![format!("At {} s", fmt(t, 2))];
            for l in &chart.lines {
                parts.push(format!(
                    "{}: {}",
                    l.label,
                    l.values[i].map_or("–".to_string(), |v| fmt(v, chart.decimals))
                ));
            }
            for m in chart.markers.iter().filter(|m| (m.t - t).abs() < 1e-9) {
                parts.push(m.label.clone());
            }
            for b in chart.bands.iter().filter(|b| b.from <= t && t < b.to) {
                parts.push(b.label.clone());
            }
            parts.extend(phases.at(t).map(str::to_string));
            parts.join(" · ")
        }
    };
    let t_for_cursor = chart.t.clone();
    let cursor_style = move || -> String {
        let (Some(i), Some(g), Some(c)) = (cursor.get(), geom.get_value(), canvas.get()) else {
            return "display:none".into();
        };
        let w = c.get_bounding_client_rect().width();
        let scale = if c.width() > 0 {
            w / f64::from(c.width())
        } else {
            1.0
        };
        format!("left:{:.1}px", g.to_px(t_for_cursor[i]) * scale)
    };
    let replay_cursor = crate::replay_cursor::current().map(|at| {
        let (x0, x1) = (
            chart.t.first().copied().unwrap_or(0.0),
            chart.t.last().copied().unwrap_or(0.0),
        );
        Arc::new(move || -> String {
            let (Some(t), Some(g), Some(c)) = (at.0.get(), geom.get_value(), canvas.get()) else {
                return "display:none".into();
            };
            if t < x0 || t > x1 {
                return "display:none".into();
            }
            let w = c.get_bounding_client_rect().width();
            let scale = if c.width() > 0 {
                w / f64::from(c.width())
            } else {
                1.0
            };
            format!("left:{:.1}px", g.to_px(t) * scale)
        }) as Arc<dyn Fn() -> String + Send + Sync>
    });
    let t_hover = chart.t.clone();
    let on_move = move |ev: web_sys::MouseEvent| {
        let (Some(c), Some(g)) = (canvas.get(), geom.get_value()) else {
            return;
        };
        let x = g.to_x(canvas_x(&c, &ev));
        if !t_hover.is_empty() {
            cursor.set(Some(nearest(&t_hover, x)));
        }
    };
    let on_key = move |ev: web_sys::KeyboardEvent| {
        if let Some(next) = step(&ev.key(), ev.shift_key(), cursor.get_untracked(), n) {
            ev.prevent_default();
            cursor.set(next);
        }
    };
    let head: Vec<String> = std::iter::once("Seconds".to_string())
        .chain(chart.lines.iter().map(|l| l.label.clone()))
        .collect();
    let rows = {
        let chart = chart.clone();
        Arc::new(move || {
            let (idx, step) = table_rows(chart.t.len(), TABLE_ROWS);
            let rows = idx
                .into_iter()
                .map(|i| {
                    std::iter::once(fmt(chart.t[i], 2))
                        .chain(chart.lines.iter().map(|l| {
                            l.values[i].map_or("–".to_string(), |v| fmt(v, chart.decimals))
                        }))
                        .collect()
                })
                .collect();
            (rows, step)
        }) as Arc<dyn Fn() -> (Vec<Vec<String>>, usize) + Send + Sync>
    };
    Figure {
        key: chart.key.clone(),
        title: chart.title.clone(),
        caption: chart.caption.clone(),
        points: n,
        canvas,
        cursor,
        cursor_style,
        readout,
        on_move,
        on_key,
        head,
        rows,
        replay_cursor,
        reduced: chart.reduced_from.map(|from| {
            format!(
                "The chart's data is reduced: it keeps {} of the {} samples (in each stretch \
                 of time, every line's first, lowest and highest sample and its last), and \
                 the table lists those.",
                fmt(n as f64, 0),
                fmt(from as f64, 0)
            )
        }),
    }
    .into_view()
}

#[component]
pub fn BarChartView(chart: Arc<BarChart>, theme: RwSignal<u32>) -> impl IntoView {
    let n = chart.bars.len();
    let (canvas, geom, cursor) = {
        let chart = chart.clone();
        drawn_canvas(theme, move |c| draw_bars(c, &chart))
    };
    let readout = {
        let chart = chart.clone();
        move || -> String {
            match cursor.get() {
                None => "Hover over a bar, or focus the chart and use the arrow keys, to read it."
                    .to_string(),
                Some(i) => {
                    let (label, v) = &chart.bars[i];
                    format!("{}: {} {}", label, fmt(*v, chart.decimals), chart.unit)
                }
            }
        }
    };
    let cursor_style = move || -> String {
        let (Some(i), Some(g), Some(c)) = (cursor.get(), geom.get_value(), canvas.get()) else {
            return "display:none".into();
        };
        let w = c.get_bounding_client_rect().width();
        let scale = if c.width() > 0 {
            w / f64::from(c.width())
        } else {
            1.0
        };
        format!("left:{:.1}px", g.to_px(i as f64 + 0.5) * scale)
    };
    let on_move = move |ev: web_sys::MouseEvent| {
        let (Some(c), Some(g)) = (canvas.get(), geom.get_value()) else {
            return;
        };
        let x = g.to_x(canvas_x(&c, &ev));
        if x >= 0.0 && x < n as f64 {
            cursor.set(Some(x as usize));
        } else {
            cursor.set(None);
        }
    };
    let on_key = move |ev: web_sys::KeyboardEvent| {
        if let Some(next) = step(&ev.key(), ev.shift_key(), cursor.get_untracked(), n) {
            ev.prevent_default();
            cursor.set(next);
        }
    };
    let head = vec![chart.columns.0.clone(), chart.columns.1.clone()];
    let rows = {
        let chart = chart.clone();
        Arc::new(move || {
            (
                chart
                    .bars
                    .iter()
                    .map(|(l, v)| vec![l.clone(), fmt(*v, chart.decimals)])
                    .collect(),
                1usize,
            )
        }) as Arc<dyn Fn() -> (Vec<Vec<String>>, usize) + Send + Sync>
    };
    Figure {
        key: chart.key.clone(),
        title: chart.title.clone(),
        caption: chart.caption.clone(),
        points: n,
        canvas,
        cursor,
        cursor_style,
        readout,
        on_move,
        on_key,
        head,
        rows,
        reduced: None,
        replay_cursor: None,
    }
    .into_view()
}

/// Several runs' lines on one time axis (0: each run's load started), one colour per run.
/// The axis starts a second before the loads: earlier readings are the idle time before.
fn draw_overlay(canvas: &web_sys::HtmlCanvasElement, c: &Overlay) -> Option<Geom> {
    let p = palette();
    let backend = CanvasBackend::with_canvas_object(canvas.clone())?;
    let root = backend.into_drawing_area();
    root.fill(&p.bg).ok()?;
    let first = c
        .series
        .iter()
        .filter_map(|s| s.t.first().copied())
        .fold(f64::INFINITY, f64::min);
    let x0 = first.max(-1.0);
    let x1 = c
        .series
        .iter()
        .filter_map(|s| s.t.last().copied())
        .fold(f64::NEG_INFINITY, f64::max);
    if !x0.is_finite() || !x1.is_finite() {
        return None;
    }
    let x1 = if x1 > x0 { x1 } else { x0 + 1.0 };
    let y1 = y_top(
        c.y_max,
        c.series
            .iter()
            .flat_map(|s| s.values.iter().flatten().copied()),
    );
    let (mut ch, geom, columns) = time_axes(
        &root,
        (x0, x1),
        y1,
        ("seconds since the load started", &c.y_label),
        &p,
    )?;
    for s in &c.series {
        let colour = p.lines[s.column % p.lines.len()];
        let style = colour.stroke_width(2);
        let from = s.t.partition_point(|&t| t < x0);
        let runs = reduce::runs(&s.t[from..], &s.values[from..], x0, x1, columns);
        let mut first = true;
        for run in runs {
            let pts = if s.kind == "step" {
                step_points(&run)
            } else {
                run
            };
            // Areas would hide each other: every run is a line here.
            if let (Ok(a), true) = (ch.draw_series(LineSeries::new(pts, style)), first) {
                a.label(s.label.as_str()).legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 18, y)], colour.stroke_width(3))
                });
                first = false;
            }
        }
    }
    ch.configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(p.bg.mix(0.85))
        .border_style(p.grid)
        .label_font(label_font(&p))
        .draw()
        .ok()?;
    root.present().ok()?;
    Some(geom)
}

/// An overlaid chart: its canvas and an HTML legend, one entry per run.
#[component]
pub fn OverlayChartView(chart: Arc<Overlay>, theme: RwSignal<u32>) -> impl IntoView {
    let (canvas, _geom, _cursor) = {
        let chart = chart.clone();
        drawn_canvas(theme, move |c| draw_overlay(c, &chart))
    };
    let description = format!("{}. {}", chart.title, chart.caption);
    view! {
        <figure class="chart overlay" data-chart=chart.key.clone() data-series=chart.series.len().to_string()>
            <h3>{chart.title.clone()}</h3>
            <div class="plot">
                <canvas node_ref=canvas width=WIDTH height=HEIGHT role="img" aria-label=description></canvas>
            </div>
            <ul class="legend">
                {chart.series.iter().map(|s| view! {
                    <li class="legend-entry" data-column=s.column.to_string()>
                        <span class=format!("swatch swatch-{}", s.column % 4 + 1) aria-hidden="true"></span>
                        {s.label.clone()}
                    </li>
                }).collect_view()}
            </ul>
            <figcaption>{chart.caption.clone()}</figcaption>
        </figure>
    }
}
