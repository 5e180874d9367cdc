//! The replay's 3D scene (`sections::replay`), drawn with plotters on a canvas from one
//! frame of the Report's replay (`analyzer::insights::replay`): on the left the KV pool, a
//! box up to its ceiling with the blocks in use piled inside and the server's own gauge
//! as a ring around it; in the middle the running requests, one column each (a request
//! thrown out is an empty outline of what it held); on the right the queue, a cube per
//! waiting request. One height axis, in the replay's unit, for all three. Nothing is
//! computed here but pixels.

use analyzer::insights::replay::{Mode, Replay};
use plotters::prelude::*;
use plotters_canvas::CanvasBackend;

use crate::charts::{fmt, label_font, nice, palette, Palette};

pub const WIDTH: u32 = 880;
pub const HEIGHT: u32 = 440;

/// Column places per row of the floor.
const PER_ROW: usize = 12;
/// Queue cubes drawn at most, in rows of [`QUEUE_ROW`] (the figures give the count).
const QUEUE_MAX: usize = 40;
const QUEUE_ROW: usize = 4;
/// The pool's footprint, a square of this side.
const POOL: f64 = 5.0;

/// Where the scene's parts sit on the floor (x across, z into the picture).
#[derive(Debug, Clone, Copy)]
struct Layout {
    columns_x0: f64,
    per_row: usize,
    queue_x0: f64,
    x1: f64,
    z1: f64,
}

impl Layout {
    fn of(r: &Replay) -> Layout {
        let per_row = r.slots.clamp(1, PER_ROW);
        let rows = r.slots.div_ceil(PER_ROW).max(1);
        let columns_x0 = POOL + 1.0;
        let queue_x0 = columns_x0 + per_row as f64 + 1.0;
        let queue_rows = QUEUE_MAX.div_ceil(QUEUE_ROW) as f64 * 0.5;
        Layout {
            columns_x0,
            per_row,
            queue_x0,
            x1: queue_x0 + QUEUE_ROW as f64 * 0.9,
            z1: POOL.max(rows as f64).max(queue_rows),
        }
    }

    /// Column place `i`'s footprint: (x0, x1, z0, z1).
    fn column(&self, i: usize) -> (f64, f64, f64, f64) {
        let (col, row) = ((i % self.per_row) as f64, (i / self.per_row) as f64);
        let x = self.columns_x0 + col;
        let z = POOL / 2.0 - 0.5 + row;
        (x + 0.12, x + 0.88, z + 0.12, z + 0.88)
    }
}

/// The top of the height axis, the same for every frame so the scene does not jump: a
/// round number above the ceiling, the gauge and the tallest pile.
pub fn y_top(r: &Replay) -> f64 {
    let f = &r.frames;
    let piles = f.columns.iter().map(|c| c.iter().flatten().sum::<f64>());
    let kv = f.kv.iter().flatten().copied();
    nice(piles.chain(kv).fold(r.ceiling, f64::max))
}

/// A box of the scene, drawn back to front.
struct Block {
    lo: (f64, f64, f64),
    hi: (f64, f64, f64),
    face: ShapeStyle,
    edge: ShapeStyle,
}

/// Draws frame `j` of `r` with heights up to `y1`; none when the canvas cannot be drawn.
pub fn draw(canvas: &web_sys::HtmlCanvasElement, r: &Replay, j: usize, y1: f64) -> Option<()> {
    let p = palette();
    let backend = CanvasBackend::with_canvas_object(canvas.clone())?;
    let root = backend.into_drawing_area();
    root.fill(&p.bg).ok()?;
    let l = Layout::of(r);
    let mut ch = ChartBuilder::on(&root)
        .margin(10)
        .build_cartesian_3d(0.0..l.x1, 0.0..y1, 0.0..l.z1)
        .ok()?;
    // The floor's proportions kept: x and z at the same pixels per unit.
    let across = 700;
    ch.set_3d_pixel_range((across, 330, (across as f64 * l.z1 / l.x1) as i32));
    ch.with_projection(|mut pb| {
        pb.yaw = 0.32;
        pb.pitch = 0.36;
        pb.scale = 1.0;
        pb.into_matrix()
    });
    // Heights as plain numbers: the unit is named beside the scene.
    let y_label = |v: &f64| fmt(*v, 0);
    let none = |_: &f64| String::new();
    ch.configure_axes()
        .x_labels(2)
        .z_labels(2)
        .y_labels(5)
        .x_formatter(&none)
        .z_formatter(&none)
        .y_formatter(&y_label)
        .max_light_lines(0)
        .axis_panel_style(p.grid.mix(0.25))
        .bold_grid_style(p.grid)
        .label_style(label_font(&p))
        .draw()
        .ok()?;
    let mut blocks = pile(r, j, y1, &p);
    blocks.extend(columns(r, j, y1, &l, &p));
    blocks.extend(queue(r, j, y1, &l, &p));
    // Farther boxes first (a larger projected depth is farther).
    let depth = |b: &Block| {
        let c = (
            (b.lo.0 + b.hi.0) / 2.0,
            (b.lo.1 + b.hi.1) / 2.0,
            (b.lo.2 + b.hi.2) / 2.0,
        );
        ch.as_coord_spec().projected_depth(&c.0, &c.1, &c.2)
    };
    let mut keyed: Vec<(i32, Block)> = blocks.into_iter().map(|b| (depth(&b), b)).collect();
    keyed.sort_by_key(|(d, _)| std::cmp::Reverse(*d));
    for (_, b) in keyed {
        ch.draw_series(std::iter::once(Cubiod::new([b.lo, b.hi], b.face, b.edge)))
            .ok()?;
    }
    pool_outline(&mut ch, r, j, &p)?;
    let font = label_font(&p);
    // Named on the floor in front of each part (the nearer side is the larger z).
    let labels = [
        ("KV pool", 0.0),
        ("running requests", l.columns_x0),
        ("queue", l.queue_x0),
    ];
    let front = l.z1 + 0.4;
    ch.draw_series(
        labels
            .into_iter()
            .map(|(text, x)| Text::new(text, (x, 0.0, front), font.clone())),
    )
    .ok()?;
    root.present().ok()?;
    Some(())
}

type Chart3d<'a> = ChartContext<
    'a,
    CanvasBackend,
    plotters::coord::cartesian::Cartesian3d<
        plotters::coord::types::RangedCoordf64,
        plotters::coord::types::RangedCoordf64,
        plotters::coord::types::RangedCoordf64,
    >,
>;

/// The pool's edges, its ceiling as a shaded lid, and the server's gauge as a ring.
fn pool_outline(ch: &mut Chart3d<'_>, r: &Replay, j: usize, p: &Palette) -> Option<()> {
    let c = r.ceiling;
    let ring = |y: f64| {
        vec![
            (0.0, y, 0.0),
            (POOL, y, 0.0),
            (POOL, y, POOL),
            (0.0, y, POOL),
            (0.0, y, 0.0),
        ]
    };
    let edges = [(0.0, 0.0), (POOL, 0.0), (POOL, POOL), (0.0, POOL)]
        .into_iter()
        .map(|(x, z)| {
            PathElement::new(vec![(x, 0.0, z), (x, c, z)], p.fg.mix(0.5).stroke_width(1))
        });
    ch.draw_series(edges).ok()?;
    ch.draw_series(std::iter::once(Polygon::new(
        ring(c),
        p.marker.mix(0.18).filled(),
    )))
    .ok()?;
    ch.draw_series(std::iter::once(PathElement::new(
        ring(c),
        p.marker.stroke_width(2),
    )))
    .ok()?;
    if let Some(kv) = r.frames.kv.get(j).copied().flatten() {
        ch.draw_series(std::iter::once(PathElement::new(
            ring(kv),
            p.lines[1].stroke_width(3),
        )))
        .ok()?;
    }
    Some(())
}

/// The blocks in use, piled in the pool: each running request's blocks in its column's
/// colour, or (aggregate) the gauge's blocks as one layer per running request; the
/// requests thrown out at this frame as outlines above.
fn pile(r: &Replay, j: usize, y1: f64, p: &Palette) -> Vec<Block> {
    let f = &r.frames;
    let inset = 0.18;
    let layer = |y0: f64, h: f64, face: ShapeStyle, edge: ShapeStyle| Block {
        lo: (inset, y0, inset),
        hi: (POOL - inset, y0 + h, POOL - inset),
        face,
        edge,
    };
    let mut out = Vec::new();
    let mut y = 0.0;
    match r.mode {
        Mode::Requests => {
            for (i, h) in f.columns.get(j).into_iter().flatten().enumerate() {
                let Some(h) = h.filter(|h| *h > 0.0) else {
                    continue;
                };
                let colour = slot_colour(p, i);
                out.push(layer(y, h, colour.mix(0.85).filled(), p.bg.stroke_width(1)));
                y += h;
            }
        }
        Mode::Aggregate => {
            let kv = f.kv.get(j).copied().flatten().unwrap_or(0.0);
            let running = f.running.get(j).copied().flatten().unwrap_or(0.0).round();
            let layers = (running as usize).clamp(1, 256);
            let h = kv / layers as f64;
            if kv > 0.0 {
                for i in 0..layers {
                    let colour = slot_colour(p, i);
                    out.push(layer(y, h, colour.mix(0.85).filled(), p.bg.stroke_width(1)));
                    y += h;
                }
            }
            // Thrown out here: as many outlines, each a layer's share.
            let evicted = f.evicted.get(j).copied().unwrap_or(0.0).round() as usize;
            let h = if kv > 0.0 { h } else { y1 * 0.03 };
            for _ in 0..evicted.min(64) {
                out.push(layer(
                    y,
                    h,
                    p.marker.mix(0.12).filled(),
                    p.marker.stroke_width(2),
                ));
                y += h;
            }
        }
    }
    out
}

/// Each column place's request, as tall as the blocks it holds; a request thrown out
/// (0) as an outline of what it held the frame before, or a flat tile.
fn columns(r: &Replay, j: usize, y1: f64, l: &Layout, p: &Palette) -> Vec<Block> {
    let f = &r.frames;
    let Some(now) = f.columns.get(j) else {
        return Vec::new();
    };
    let before = j.checked_sub(1).and_then(|b| f.columns.get(b));
    let mut out = Vec::new();
    for (i, h) in now.iter().enumerate() {
        let Some(h) = *h else {
            continue;
        };
        let (x0, x1, z0, z1) = l.column(i);
        if h > 0.0 {
            let colour = slot_colour(p, i);
            out.push(Block {
                lo: (x0, 0.0, z0),
                hi: (x1, h, z1),
                face: colour.mix(0.9).filled(),
                edge: p.bg.stroke_width(1),
            });
        } else {
            let held = before
                .and_then(|b| b.get(i).copied().flatten())
                .filter(|h| *h > 0.0)
                .unwrap_or(y1 * 0.01);
            out.push(Block {
                lo: (x0, 0.0, z0),
                hi: (x1, held, z1),
                face: p.marker.mix(0.1).filled(),
                edge: p.marker.stroke_width(2),
            });
        }
    }
    out
}

/// The server's waiting requests as cubes on the floor beside the columns.
fn queue(r: &Replay, j: usize, y1: f64, l: &Layout, p: &Palette) -> Vec<Block> {
    let waiting = r.frames.waiting.get(j).copied().flatten().unwrap_or(0.0);
    let n = (waiting.max(0.0).round() as usize).min(QUEUE_MAX);
    let h = y1 * 0.035;
    (0..n)
        .map(|k| {
            let x = l.queue_x0 + (k % QUEUE_ROW) as f64 * 0.9;
            let z = (k / QUEUE_ROW) as f64 * 0.5;
            Block {
                lo: (x, 0.0, z),
                hi: (x + 0.7, h, z + 0.4),
                face: p.reference.mix(0.55).filled(),
                edge: p.bg.stroke_width(1),
            }
        })
        .collect()
}

/// A column place's colour: the same in the pile and in its column.
fn slot_colour(p: &Palette, i: usize) -> RGBColor {
    [p.lines[0], p.lines[2], p.lines[3]][i % 3]
}
