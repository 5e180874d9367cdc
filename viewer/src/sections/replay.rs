//! "Replay": the run second by second, from the Report's replay frames
//! (`analyzer::insights::replay`), drawn in 3D by `crate::replay_scene`. A time cursor
//! with play and pause, a speed and a slider over the recording, all usable from the
//! keyboard (the scene itself: Space plays or pauses, the arrows step a frame, Shift ten,
//! Home and End); the moment's figures beside the scene and, for screen readers, as one
//! sentence. The container carries the moment as `data-replay-t` (seconds), and the time
//! charts' replay cursor follows it (`crate::replay_cursor`).

use std::sync::Arc;
use std::time::Duration;

use analyzer::insights::replay::{Mode, Replay};
use leptos::prelude::*;

use crate::charts::fmt;
use crate::dom::window;
use crate::replay_scene::{self, HEIGHT, WIDTH};

/// The speeds offered, times real time.
const SPEEDS: [f64; 6] = [1.0, 2.0, 5.0, 10.0, 30.0, 60.0];
/// Milliseconds between two steps of the playing clock.
const TICK_MS: u64 = 33;

fn now_ms() -> f64 {
    window().performance().map_or(0.0, |p| p.now())
}

/// The moment's figures as (label, value) pairs, in the order shown.
fn figures(r: &Replay, j: usize) -> Vec<(String, String)> {
    let f = &r.frames;
    let count = |v: Option<f64>| v.map_or("–".to_string(), |v| fmt(v, 0));
    let kv = match f.kv.get(j).copied().flatten() {
        None => "–".to_string(),
        Some(kv) if r.unit == "blocks" => format!(
            "{} of {} blocks ({}%)",
            fmt(kv, 0),
            fmt(r.ceiling, 0),
            fmt(kv / r.ceiling.max(1.0) * 100.0, 0)
        ),
        Some(kv) => format!("{}% of the pool", fmt(kv, 0)),
    };
    let evictions = f
        .evictions
        .get(j)
        .copied()
        .flatten()
        .map_or("not counted".to_string(), |v| fmt(v, 0));
    let tokens = f
        .tokens_per_s
        .get(j)
        .copied()
        .flatten()
        .map_or("–".to_string(), |v| fmt(v, 0));
    let mut out = vec![
        (
            "Running".to_string(),
            count(f.running.get(j).copied().flatten()),
        ),
        (
            "Waiting".to_string(),
            count(f.waiting.get(j).copied().flatten()),
        ),
        ("KV in use".to_string(), kv),
        (format!("{}s so far", capitalised(&r.eviction)), evictions),
        ("Output tokens/s".to_string(), tokens),
    ];
    if r.mode == Mode::Requests {
        let (held, out_now) = column_counts(r, j);
        out.push((
            "Request columns".to_string(),
            format!("{held} holding blocks, {out_now} thrown out"),
        ));
    }
    out
}

fn capitalised(word: &str) -> String {
    let mut c = word.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

/// Columns holding blocks and columns thrown out (drawn at nothing) at frame `j`.
fn column_counts(r: &Replay, j: usize) -> (usize, usize) {
    let row = r.frames.columns.get(j).map_or(&[][..], Vec::as_slice);
    let held = row.iter().flatten().filter(|h| **h > 0.0).count();
    let out = row.iter().flatten().filter(|h| **h == 0.0).count();
    (held, out)
}

/// The moment in one sentence, for screen readers.
fn sentence(r: &Replay, j: usize) -> String {
    let t = r.frames.t.get(j).copied().unwrap_or(0.0);
    let parts: Vec<String> = figures(r, j)
        .into_iter()
        .map(|(label, value)| format!("{}: {value}", label.to_lowercase()))
        .collect();
    let mut s = format!("At {} s: {}.", fmt(t, 1), parts.join(", "));
    let evicted = r.frames.evicted.get(j).copied().unwrap_or(0.0);
    if evicted > 0.0 {
        s.push_str(&format!(
            " {} {} here.",
            fmt(evicted, 0),
            plural(&r.eviction, evicted)
        ));
    }
    s
}

fn plural(word: &str, n: f64) -> String {
    if n == 1.0 {
        word.to_string()
    } else {
        format!("{word}s")
    }
}

#[component]
pub fn ReplaySection(replay: Arc<Replay>, theme: RwSignal<u32>) -> impl IntoView {
    let n = replay.frames.len();
    let (Some(&t0), Some(&t1)) = (replay.frames.t.first(), replay.frames.t.last()) else {
        return None;
    };
    let now = RwSignal::new(t0);
    let playing = RwSignal::new(false);
    let speed = RwSignal::new(1.0f64);
    let frame = {
        let r = replay.clone();
        Memo::new(move |_| r.frames.at(now.get()))
    };
    // The time charts' second cursor, once the reader has played or sought.
    let touched = RwSignal::new(false);
    if let Some(cursor) = crate::replay_cursor::current() {
        Effect::new(move |_| {
            if touched.get() {
                cursor.0.set(Some(now.get()));
            }
        });
    }
    // The playing clock: a step every TICK_MS moves the moment by the time passed
    // times the speed; it stops at the end.
    let timer = StoredValue::new(None::<IntervalHandle>);
    let last = StoredValue::new(0.0f64);
    let stop = move || {
        if let Some(h) = timer.get_value() {
            h.clear();
        }
        timer.set_value(None);
        playing.set(false);
    };
    let play = move || {
        if timer.get_value().is_some() {
            return;
        }
        if now.get_untracked() >= t1 {
            now.set(t0);
        }
        touched.set(true);
        last.set_value(now_ms());
        let step = move || {
            let ms = now_ms();
            let passed = (ms - last.get_value()).max(0.0) / 1000.0;
            last.set_value(ms);
            let next = now.get_untracked() + passed * speed.get_untracked();
            if next >= t1 {
                now.set(t1);
                stop();
            } else {
                now.set(next);
            }
        };
        let handle = set_interval_with_handle(step, Duration::from_millis(TICK_MS)).ok();
        timer.set_value(handle);
        playing.set(handle.is_some());
    };
    on_cleanup(stop);
    let toggle = move || {
        if playing.get_untracked() {
            stop();
        } else {
            play();
        }
    };
    // Seeking to frame k: its time, through a stored copy so the closure stays `Copy`.
    let times = StoredValue::new(replay.frames.t.clone());
    let seek = move |k: usize| {
        touched.set(true);
        if let Some(t) = times.with_value(|t| t.get(k.min(n - 1)).copied()) {
            now.set(t);
        }
    };
    let canvas = NodeRef::<leptos::html::Canvas>::new();
    {
        let r = replay.clone();
        let y1 = replay_scene::y_top(&replay);
        Effect::new(move |_| {
            theme.track();
            let j = frame.get();
            if let Some(c) = canvas.get() {
                let drawn = replay_scene::draw(&c, &r, j, y1).is_some();
                if let Some(el) = c.parent_element() {
                    let _ = el.set_attribute("data-drawn", if drawn { "yes" } else { "no" });
                }
            }
        });
    }
    let on_key = move |ev: web_sys::KeyboardEvent| {
        let j = frame.get_untracked();
        let by = if ev.shift_key() { 10 } else { 1 };
        let to = match ev.key().as_str() {
            " " | "k" => {
                ev.prevent_default();
                toggle();
                return;
            }
            "ArrowRight" | "ArrowUp" => (j + by).min(n - 1),
            "ArrowLeft" | "ArrowDown" => j.saturating_sub(by),
            "Home" => 0,
            "End" => n - 1,
            _ => return,
        };
        ev.prevent_default();
        seek(to);
    };
    let on_seek = move |ev: web_sys::Event| {
        if let Ok(k) = event_target_value(&ev).parse::<usize>() {
            seek(k);
        }
    };
    let on_speed = move |ev: web_sys::Event| {
        if let Ok(s) = event_target_value(&ev).parse::<f64>() {
            speed.set(s);
        }
    };
    let figures_now = {
        let r = replay.clone();
        move || figures(&r, frame.get())
    };
    let said = {
        let r = replay.clone();
        move || sentence(&r, frame.get())
    };
    let dropped = {
        let r = replay.clone();
        move || {
            let j = frame.get();
            match r.mode {
                Mode::Requests => column_counts(&r, j).1,
                Mode::Aggregate => r.frames.evicted.get(j).copied().unwrap_or(0.0) as usize,
            }
        }
    };
    let held = {
        let r = replay.clone();
        move || column_counts(&r, frame.get()).0
    };
    let clock = move || format!("{} s of {} s", fmt(now.get(), 1), fmt(t1, 1));
    let mode = match replay.mode {
        Mode::Requests => "requests",
        Mode::Aggregate => "aggregate",
    };
    let description = format!("{}. {}", replay.title, replay.caption);
    let unit_note = match replay.block_tokens.filter(|_| replay.unit == "blocks") {
        Some(b) => format!("Heights in KV blocks of {} tokens.", fmt(b, 0)),
        None => format!("Heights in {}.", replay.unit),
    };
    let (legend_pile, legend_out) = match replay.mode {
        Mode::Requests => ("a request's blocks", "a request thrown out"),
        Mode::Aggregate => ("a running request's share", "thrown out here"),
    };
    Some(view! {
        <section id="replay" aria-labelledby="replay-h">
            <h2 id="replay-h">{replay.title.clone()}</h2>
            <div
                class="replay"
                role="group"
                aria-label="Replay of the recording"
                data-mode=mode
                data-frames=n.to_string()
                data-replay-t=move || format!("{:.3}", now.get())
                data-frame=move || frame.get().to_string()
                data-playing=move || playing.get().to_string()
                data-columns=move || held().to_string()
                data-dropped=move || dropped().to_string()
            >
                <div class="replay-controls">
                    <button
                        type="button"
                        class="button"
                        id="replay-play"
                        aria-pressed=move || playing.get().to_string()
                        on:click=move |_| toggle()
                    >
                        {move || if playing.get() { "Pause" } else { "Play" }}
                    </button>
                    <label class="replay-speed">
                        "Speed "
                        <select id="replay-speed" on:change=on_speed>
                            {SPEEDS
                                .iter()
                                .map(|s| view! { <option value=s.to_string() selected=*s == 1.0>{format!("×{s}")}</option> })
                                .collect_view()}
                        </select>
                    </label>
                    <label class="replay-seek">
                        <span class="visually-hidden">"Moment of the recording"</span>
                        <input
                            type="range"
                            id="replay-seek"
                            min="0"
                            max=(n - 1).to_string()
                            step="1"
                            prop:value=move || frame.get().to_string()
                            aria-valuetext=clock
                            on:input=on_seek
                        />
                    </label>
                    <output id="replay-clock" for="replay-seek">{clock}</output>
                </div>
                <div class="replay-body">
                    <div class="plot">
                        <canvas
                            node_ref=canvas
                            width=WIDTH
                            height=HEIGHT
                            tabindex="0"
                            role="img"
                            aria-label=description
                            aria-describedby="replay-text"
                            on:keydown=on_key
                        ></canvas>
                    </div>
                    <div class="replay-side">
                    <dl class="replay-figures" id="replay-figures">
                        {move || {
                            figures_now()
                                .into_iter()
                                .map(|(k, v)| view! { <div class="fact"><dt>{k}</dt><dd>{v}</dd></div> })
                                .collect_view()
                        }}
                    </dl>
                    <ul class="legend replay-legend" aria-label="Legend">
                        <li><span class="swatch swatch-ceiling" aria-hidden="true"></span>"the pool's ceiling"</li>
                        <li><span class="swatch swatch-2" aria-hidden="true"></span>"the server's KV gauge"</li>
                        <li><span class="swatch swatch-1" aria-hidden="true"></span>{legend_pile}</li>
                        <li><span class="swatch swatch-out" aria-hidden="true"></span>{legend_out}</li>
                        <li><span class="swatch swatch-queue" aria-hidden="true"></span>"a waiting request"</li>
                    </ul>
                    <p class="note" id="replay-unit">{unit_note}</p>
                    </div>
                </div>
                <p
                    class="visually-hidden"
                    id="replay-text"
                    aria-live=move || if playing.get() { "off" } else { "polite" }
                >
                    {said}
                </p>
            </div>
            <p class="replay-caption">{replay.caption.clone()}</p>
            {replay.notes.iter().map(|n| view! { <p class="note">{n.clone()}</p> }).collect_view()}
            <p class="note">"Keys, with the scene focused: Space plays or pauses, the arrows step a frame (Shift: ten), Home and End go to the start and the end."</p>
        </section>
    })
}
