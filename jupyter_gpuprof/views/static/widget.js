// jupyter_gpuprof report widget: five panels drawn from the run summary (no trace, no CDN).
// Every trace-derived string goes in through textContent; SVG strings in `charts` were
// escaped in Python (views/svg.py).

const SVG_NS = "http://www.w3.org/2000/svg";
const CAUSE_COLORS = { input: "#e67e22", transfer: "#8e44ad", sync: "#c0392b", launch: "#2980b9", host: "#7f8c8d" };
const LANE_COLORS = { ranges: "#16a085", cpu: "#3498db", sync: "#c0392b", gpu: "#27ae60" };
const PANELS = [
  ["steps", "Step time"], ["timeline", "GPU timeline"], ["ops", "Operators"],
  ["transfers", "Transfers & syncs"], ["next", "Next steps"],
];

function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") el.className = v;
    else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v);
  }
  for (const c of children) {
    if (c === null || c === undefined) continue;
    el.append(c instanceof Node ? c : String(c));
  }
  return el;
}

function s(tag, attrs = {}) {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  return el;
}

const ms = (v) => (v === null || v === undefined ? "n/a" : `${Number(v).toFixed(2)} ms`);
const us = (v) => (v === null || v === undefined ? "" : v >= 1000 ? `${(v / 1000).toFixed(2)} ms` : `${Number(v).toFixed(1)} µs`);
const num = (v, d = 1) => (v === null || v === undefined ? "n/a" : Number(v).toFixed(d));

function banner(sm) {
  const src = sm.source || {};
  if (src.status === "failed") return `Partial report: the profiled code raised (${src.error}).`;
  if (!(sm.gpu || {}).available) return "GPU metrics unavailable: no CUDA activity was recorded (CPU-only run).";
  return null;
}

function header(sm) {
  const st = sm.steps || {}, v = sm.verdict || {}, src = sm.source || {};
  const label = st.source === "baseline" ? "unprofiled baseline" : "profiled steps";
  const head = h("div", { class: "gpuprof-w-head" },
    h("div", { class: "gpuprof-w-title" }, `GPU profile — ${src.name || src.path || ""}`));
  const b = banner(sm);
  if (b) head.append(h("div", { class: "gpuprof-w-banner" }, b));
  if (!st.n) {
    head.append(h("div", { class: "gpuprof-w-banner" },
      "No training steps found: nothing was timed (did the cell run a step, or the loop call optimizer.step()?)."));
  } else {
    head.append(h("div", { class: "gpuprof-w-stats" },
      `Step time (${label}, n=${st.n}): median `, h("b", {}, ms(st.median_ms)),
      ", p95 ", h("b", {}, ms(st.p95_ms)), `, IQR ${ms(st.iqr_ms)}, ${(st.outliers || []).length} outlier(s)`,
      (sm.gpu || {}).available ? ` · GPU busy ${num(sm.gpu.busy_pct_real, 0)}% of the real step` : ""));
  }
  head.append(h("div", { class: "gpuprof-w-verdict" },
    h("b", {}, `Verdict: ${v.category || "unavailable"}`), ` (${v.confidence || "?"} confidence) — ${v.summary || ""}`));
  return head;
}

function stepsPanel(sm, charts) {
  const st = sm.steps || {}, p = st.profiled || {};
  const box = h("div", {});
  if (!(st.baseline_ms || []).length && !(st.profiled_ms || []).length) {
    box.append(h("p", { class: "gpuprof-w-empty" }, "No step times were recorded."));
    return box;
  }
  const chart = h("div", { class: "gpuprof-w-chart" });
  chart.innerHTML = charts.steps || "";  // escaped SVG built by views/svg.py
  box.append(chart);
  const out = (st.outliers || []).map((i) => `#${i}`).join(", ") || "none";
  box.append(h("p", {}, `Baseline median ${ms(st.median_ms)}, p95 ${ms(st.p95_ms)}, min ${ms(st.min_ms)}, max ${ms(st.max_ms)}; outliers: ${out}.`));
  const inp = sm.input || {};
  if ((inp.host_share_pct || 0) >= 1) {
    box.append(h("p", {}, `Data pipeline: ${num(inp.host_share_pct, 0)}% of the host timeline (${num(inp.ms_per_step, 1)} ms per profiled step).`));
  }
  if (p.n && st.source === "baseline") {
    const r = st.profiler_inflation || 0;
    box.append(h("p", {}, `Profiled steps: median ${ms(p.median_ms)} = ${num(r, 2)}× the baseline ` +
      (r > 1.05 ? "(the profiler's own cost)." : r < 0.95 ? "(steps overlap less without per-step syncs)." : "(no visible profiler cost).")));
  }
  return box;
}

function timelinePanel(sm, charts) {
  const tl = sm.timeline, box = h("div", {});
  const gpu = sm.gpu || {};
  if (gpu.available) {
    const causes = Object.entries(gpu.idle_by_cause_ms || {}).filter(([, v]) => v >= 0.005)
      .map(([k, v]) => `${k} ${v.toFixed(2)} ms`).join(", ");
    box.append(h("p", {}, `GPU busy ${num(gpu.busy_pct, 1)}% of the profiled window; ${num(gpu.busy_ms_per_step, 2)} ms busy per step` +
      (causes ? `; idle per real step by cause: ${causes}.` : ".")));
  }
  if (!tl || !(tl.lanes || []).length) {
    box.append(h("p", { class: "gpuprof-w-empty" }, "No timeline: the trace holds no events in the profiled window" +
      ((sm.ranks || []).length > 1 ? " (multi-rank runs: open one rank's trace)." : ".")));
  } else {
    box.append(drawTimeline(tl));
  }
  if (charts.kinds) {
    const k = h("div", { class: "gpuprof-w-chart" });
    k.innerHTML = charts.kinds;
    box.append(h("h4", {}, "GPU time by kernel kind"), k);
  }
  return box;
}

function drawTimeline(tl) {
  const wrap = h("div", { class: "gpuprof-w-timeline" });
  const LEFT = 170, LANE = 22, TOP = 18;
  let W = 900;  // follows the output's width (ResizeObserver below), so labels keep their size
  const H = TOP + LANE * tl.lanes.length + 24;
  const svg = s("svg", { width: "100%", viewBox: `0 0 ${W} ${H}`, class: "gpuprof-w-tl" });
  const tip = h("div", { class: "gpuprof-w-tip" });
  const info = h("div", { class: "gpuprof-w-hint" },
    `${tl.n_events.toLocaleString()} events as ${tl.n_rects.toLocaleString()} rectangles · wheel: zoom · drag: pan · double-click: reset`);
  let v0 = 0, v1 = tl.dur_us;
  const clipId = `gpuprof-clip-${Math.random().toString(36).slice(2)}`;
  let plotW = W - LEFT - 10;
  const x = (t) => LEFT + ((t - v0) / (v1 - v0)) * plotW;
  const render = () => {
    svg.replaceChildren();
    const clip = s("clipPath", { id: clipId });
    clip.append(s("rect", { x: LEFT, y: 0, width: plotW, height: H }));
    svg.append(clip);
    const plot = s("g", { "clip-path": `url(#${clipId})` });
    const g = tl.gaps || { start: [], dur: [], cause: [] };
    g.start.forEach((st, i) => {
      const d = g.dur[i];
      if (st + d < v0 || st > v1) return;
      const r = s("rect", { x: x(st), y: TOP, width: Math.max(x(st + d) - x(st), 0.5), height: LANE * tl.lanes.length,
        fill: CAUSE_COLORS[g.cause[i]] || "#999", "fill-opacity": 0.2, class: "gpuprof-w-gap" });
      r.dataset.gap = String(i);
      plot.append(r);
    });
    tl.lanes.forEach((lane, li) => {
      const y = TOP + li * LANE;
      const label = s("text", { x: 4, y: y + 15, class: "gpuprof-w-lane" });
      label.textContent = lane.label;
      svg.append(label);
      const color = LANE_COLORS[lane.kind] || "#555";
      for (let i = 0; i < lane.start.length; i++) {
        const a = lane.start[i], b = a + lane.dur[i];
        if (b < v0 || a > v1) continue;
        const r = s("rect", { x: x(a), y: y + 3, width: Math.max(x(b) - x(a), 0.7), height: LANE - 6, fill: color });
        r.dataset.lane = String(li);
        r.dataset.i = String(i);
        plot.append(r);
      }
    });
    svg.append(plot);
    const span = (v1 - v0) / 1000;
    for (let k = 0; k <= 5; k++) {
      const anchor = k === 0 ? "start" : k === 5 ? "end" : "middle";
      const t = s("text", { x: LEFT + (k * plotW) / 5, y: H - 6, "text-anchor": anchor, class: "gpuprof-w-axis" });
      t.textContent = `${((v0 / 1000) + (k * span) / 5).toPrecision(4)} ms`;
      svg.append(t);
    }
  };
  const toTime = (ev) => {
    const box = svg.getBoundingClientRect();
    const px = ((ev.clientX - box.left) / box.width) * W;
    return v0 + ((px - LEFT) / plotW) * (v1 - v0);
  };
  svg.addEventListener("wheel", (ev) => {
    ev.preventDefault();
    const t = toTime(ev), f = ev.deltaY > 0 ? 1.25 : 0.8;
    const min = 1;  // never zoom below 1 µs
    v0 = Math.max(0, t - (t - v0) * f);
    v1 = Math.min(tl.dur_us, t + (v1 - t) * f);
    if (v1 - v0 < min) v1 = v0 + min;
    render();
  }, { passive: false });
  let drag = null;
  svg.addEventListener("mousedown", (ev) => { drag = { x: ev.clientX, v0, v1 }; });
  window.addEventListener("mouseup", () => { drag = null; });
  svg.addEventListener("mousemove", (ev) => {
    if (drag) {
      const box = svg.getBoundingClientRect();
      const dt = ((ev.clientX - drag.x) / box.width) * W / plotW * (drag.v1 - drag.v0);
      const w = drag.v1 - drag.v0;
      v0 = Math.min(Math.max(0, drag.v0 - dt), tl.dur_us - w);
      v1 = v0 + w;
      render();
      return;
    }
    const t = ev.target;
    if (t.dataset && t.dataset.lane !== undefined) {
      const lane = tl.lanes[Number(t.dataset.lane)], i = Number(t.dataset.i);
      const lines = [tl.names[lane.name[i]]];
      if (lane.op && tl.names[lane.op[i]]) lines.push(`op: ${tl.names[lane.op[i]]}`);
      if (lane.shape && !["", "[]"].includes(tl.names[lane.shape[i]])) lines.push(`shapes: ${tl.names[lane.shape[i]]}`);
      lines.push(`${us(lane.dur[i])}` + (lane.count[i] > 1 ? ` (${lane.count[i]} events merged)` : ""));
      tip.textContent = lines.join("\n");
    } else if (t.dataset && t.dataset.gap !== undefined) {
      const g = tl.gaps, i = Number(t.dataset.gap);
      tip.textContent = `GPU idle ${us(g.dur[i])}: ${g.cause[i]}`;
    } else {
      tip.style.display = "none";
      return;
    }
    tip.style.display = "block";
    const wb = wrap.getBoundingClientRect();
    tip.style.left = `${ev.clientX - wb.left + 12}px`;
    tip.style.top = `${ev.clientY - wb.top + 12}px`;
  });
  svg.addEventListener("mouseleave", () => { tip.style.display = "none"; });
  svg.addEventListener("dblclick", () => { v0 = 0; v1 = tl.dur_us; render(); });
  const legend = h("div", { class: "gpuprof-w-legend" }, "idle gaps: ",
    ...Object.entries(CAUSE_COLORS).map(([k, c]) => h("span", { style: `color:${c}` }, `■ ${k} `)));
  render();
  if (typeof ResizeObserver !== "undefined") {
    new ResizeObserver(() => {
      const w = Math.round(wrap.clientWidth);
      if (w < 300 || Math.abs(w - W) < 4) return;  // hidden tab, or no real change
      W = w;
      plotW = W - LEFT - 10;
      svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
      render();
    }).observe(wrap);
  }
  wrap.append(info, svg, tip, legend);
  return wrap;
}

const OP_COLS = [
  ["name", "op", "s"], ["calls", "calls", "n"], ["cpu_total_us", "CPU total", "t"], ["cpu_self_us", "CPU self", "t"],
  ["cuda_total_us", "CUDA total", "t"], ["cuda_self_us", "CUDA self", "t"], ["input_dims", "shapes", "s"],
];

function opsPanel(sm) {
  const rows = (sm.ops || []).slice();
  const box = h("div", {});
  if (!rows.length) {
    box.append(h("p", { class: "gpuprof-w-empty" }, "No operators were recorded."));
    return box;
  }
  let key = "cuda_total_us", desc = true, filter = "", side = "all";
  const input = h("input", { type: "search", placeholder: "filter ops…", class: "gpuprof-w-filter" });
  const select = h("select", { class: "gpuprof-w-side" },
    h("option", { value: "all" }, "all ops"), h("option", { value: "cuda" }, "ops with CUDA time"),
    h("option", { value: "cpu" }, "CPU-only ops"));
  const table = h("table", { class: "gpuprof-w-table gpuprof-w-ops" });
  const draw = () => {
    const thead = h("tr", {}, ...OP_COLS.map(([k, label]) => h("th", {
      class: k === key ? (desc ? "sorted desc" : "sorted asc") : "", "data-key": k,
      onclick: () => { desc = key === k ? !desc : k !== "name"; key = k; draw(); },
    }, label + (k === key ? (desc ? " ▼" : " ▲") : ""))));
    let shown = rows.filter((r) => String(r.name).toLowerCase().includes(filter));
    if (side === "cuda") shown = shown.filter((r) => (r.cuda_total_us || 0) > 0);
    if (side === "cpu") shown = shown.filter((r) => !(r.cuda_total_us > 0));
    shown.sort((a, b) => {
      const x = a[key] ?? "", y = b[key] ?? "";
      const c = typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y));
      return desc ? -c : c;
    });
    const body = shown.map((r) => h("tr", {}, ...OP_COLS.map(([k, , kind]) =>
      h("td", { class: kind === "s" ? "n" : "", title: String(r[k] ?? "") }, kind === "t" ? us(r[k]) : String(r[k] ?? "")))));
    table.replaceChildren(h("thead", {}, thead), h("tbody", {}, ...body));
  };
  input.addEventListener("input", () => { filter = input.value.toLowerCase(); draw(); });
  select.addEventListener("change", () => { side = select.value; draw(); });
  draw();
  box.append(h("div", { class: "gpuprof-w-tools" }, input, select,
    h("span", { class: "gpuprof-w-hint" }, `${rows.length} ops (top by CUDA time; report.ops has all)`)), table);
  return box;
}

function transfersPanel(sm) {
  const box = h("div", {});
  const t = sm.transfers || [];
  if (t.length) {
    box.append(h("table", { class: "gpuprof-w-table" },
      h("tr", {}, ...["direction", "memory", "copies", "MB", "GB/s", "blocking"].map((c) => h("th", {}, c))),
      ...t.map((r) => h("tr", {}, h("td", {}, r.kind), h("td", {}, r.pageable ? "pageable" : "pinned"),
        h("td", {}, r.count), h("td", {}, num(r.bytes / 1e6, 2)), h("td", {}, num(r.gbps, 1)), h("td", {}, r.blocking)))));
  } else {
    box.append(h("p", { class: "gpuprof-w-empty" }, "No host↔device copies recorded."));
  }
  const sy = sm.syncs || {};
  box.append(h("h4", {}, `Sync calls: ${sy.count || 0} (${num(sy.per_step, 1)} per step)`));
  if ((sy.top || []).length) {
    box.append(h("table", { class: "gpuprof-w-table" },
      h("tr", {}, h("th", { class: "n" }, "caused by"), h("th", {}, "calls"), h("th", {}, "GPU idle after")),
      ...sy.top.map((r) => h("tr", {}, h("td", { class: "n" }, r.caller), h("td", {}, r.calls), h("td", {}, us(r.gpu_idle_after_us))))));
  }
  return box;
}

function copyText(text, button) {
  const done = () => { button.textContent = "Copied"; setTimeout(() => { button.textContent = "Copy"; }, 1500); };
  if (navigator.clipboard && window.isSecureContext) {
    navigator.clipboard.writeText(text).then(done, () => fallbackCopy(text, done));
  } else {
    fallbackCopy(text, done);
  }
}

function fallbackCopy(text, done) {
  const area = h("textarea", { style: "position:fixed;opacity:0" });
  area.value = text;
  document.body.append(area);
  area.select();
  document.execCommand("copy");
  area.remove();
  done();
}

function nextPanel(sm) {
  const v = sm.verdict || {}, box = h("div", {});
  box.append(h("div", { class: "gpuprof-w-verdict" }, h("b", {}, `Verdict: ${v.category || "unavailable"}`),
    ` (${v.confidence || "?"} confidence)`, h("div", {}, v.summary || ""),
    h("ul", {}, ...(v.reasons || []).map((r) => h("li", {}, r)))));
  const fs = sm.findings || [];
  if (!fs.length) box.append(h("p", {}, "No findings worth acting on."));
  const list = h("ol", { class: "gpuprof-w-findings" });
  for (const f of fs) {
    const pre = h("pre", {}, f.fix || "");
    const btn = h("button", { class: "gpuprof-w-copy", type: "button" }, "Copy");
    btn.addEventListener("click", () => copyText(f.fix || "", btn));
    list.append(h("li", {}, h("b", {}, `[${f.category}] ${f.title}`),
      ` — expected gain ≈${Math.round(f.expected_gain_pct || 0)}% (${num(f.cost_ms, 2)} ms per step)`,
      h("div", { class: "gpuprof-w-evidence" }, f.evidence || ""), h("div", { class: "gpuprof-w-fix" }, btn, pre)));
  }
  box.append(list);
  return box;
}

function render({ model, el }) {
  const root = h("div", { class: "gpuprof-w" });
  const draw = () => {
    const sm = model.get("summary") || {}, charts = model.get("charts") || {};
    const tabs = h("div", { class: "gpuprof-w-tabs", role: "tablist" });
    const body = h("div", { class: "gpuprof-w-body" });
    const builders = { steps: stepsPanel, timeline: timelinePanel, ops: opsPanel, transfers: transfersPanel, next: nextPanel };
    const panels = {};
    const show = (id) => {
      for (const [pid, p] of Object.entries(panels)) p.hidden = pid !== id;
      for (const b of tabs.children) b.setAttribute("aria-selected", String(b.dataset.panel === id));
    };
    for (const [id, label] of PANELS) {
      const b = h("button", { type: "button", role: "tab", class: "gpuprof-w-tab" }, label);
      b.dataset.panel = id;
      b.addEventListener("click", () => show(id));
      tabs.append(b);
      panels[id] = h("div", { class: `gpuprof-w-panel gpuprof-w-panel-${id}`, role: "tabpanel" }, builders[id](sm, charts));
      body.append(panels[id]);
    }
    show("steps");
    root.replaceChildren(header(sm), tabs, body);
  };
  draw();
  model.on("change:summary", draw);
  el.append(root);
}

export default { render };
