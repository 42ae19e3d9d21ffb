/* Interactive explorers (issue 21): sliders over settings precomputed in a chapter.
 *
 * A chapter's output holds <div class="blc-explorer" hidden data-figure="ID"> with a JSON
 * description and its arrays (uint8, deflated, base64), written by _ext/explorer.py from the data
 * lib/book/explorer.py computed in the chapter. This
 * script decodes them (the browser's own DecompressionStream), builds sliders, canvases and a
 * table of numbers, and puts them into the figure ID in place of its static image, which stays
 * for print (explorer.css) and for readers without JavaScript. No request, no kernel.
 */
(function () {
  "use strict";

  async function inflate(b64) {
    const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate"));
    return new Uint8Array(await new Response(stream).arrayBuffer());
  }

  function el(tag, attrs, children) {
    const node = document.createElement(tag);
    Object.entries(attrs || {}).forEach(([k, v]) => {
      if (k === "text") node.textContent = v;
      else node.setAttribute(k, v);
    });
    (children || []).forEach((c) => node.appendChild(c));
    return node;
  }

  const SUPERSCRIPT = { "-": "⁻", "0": "⁰", "1": "¹", "2": "²", "3": "³", "4": "⁴",
    "5": "⁵", "6": "⁶", "7": "⁷", "8": "⁸", "9": "⁹" };
  const power = (k) => "10" + String(k).split("").map((c) => SUPERSCRIPT[c] || c).join("");

  // --- the probability plane -----------------------------------------------------------------

  function decodeLogits(codes, spec) {
    const top = Math.asinh(spec.code.max / spec.code.scale);
    const out = new Float32Array(codes.length);
    for (let i = 0; i < codes.length; i++) {
      out[i] = spec.code.scale * Math.sinh(((codes[i] - 127) / 127) * top);
    }
    return out;
  }

  function drawPoints(ctx, points, spec, W, H, test) {
    for (let i = 0; i < points.length; i += 3) {
      const x = (points[i] / 255) * W, y = H - (points[i + 1] / 255) * H;
      ctx.beginPath();
      ctx.arc(x, y, test ? 2.6 : 1.8, 0, 2 * Math.PI);
      if (test) {
        ctx.strokeStyle = spec.classes[points[i + 2]];
        ctx.lineWidth = 1.3;
        ctx.stroke();
      } else {
        ctx.fillStyle = spec.classes[points[i + 2]];
        ctx.fill();
      }
    }
  }

  // Marching squares on the n x n logit grid: line segments of each contour level.
  function contours(a, n, level, W, H) {
    const segs = [];
    const px = (i) => (i / (n - 1)) * W, py = (j) => H - (j / (n - 1)) * H;
    for (let j = 0; j < n - 1; j++) {
      for (let i = 0; i < n - 1; i++) {
        const v = [a[j * n + i], a[j * n + i + 1], a[(j + 1) * n + i + 1], a[(j + 1) * n + i]];
        const c = [[i, j], [i + 1, j], [i + 1, j + 1], [i, j + 1]];
        const cross = [];
        for (let e = 0; e < 4; e++) {
          const p = v[e] - level, q = v[(e + 1) % 4] - level;
          if ((p < 0) !== (q < 0)) {
            const t = p / (p - q);
            const [x0, y0] = c[e], [x1, y1] = c[(e + 1) % 4];
            cross.push([px(x0 + t * (x1 - x0)), py(y0 + t * (y1 - y0))]);
          }
        }
        if (cross.length === 2) segs.push(cross);
        else if (cross.length === 4) {   // a saddle: pair by the centre's side
          const centre = (v[0] + v[1] + v[2] + v[3]) / 4 - level;
          if ((centre < 0) === (v[0] - level < 0)) segs.push([cross[0], cross[3]], [cross[1], cross[2]]);
          else segs.push([cross[0], cross[1]], [cross[2], cross[3]]);
        }
      }
    }
    return segs;
  }

  // --- a plane panel: the drawing in a box, axes in data units and a colour bar under it -------

  const FONT = "13px sans-serif";
  const PLANE_MARGIN = { left: 44, right: 12, top: 8, bottom: 40, bar: 62 };

  function planeBox(canvas) {
    const m = PLANE_MARGIN;
    return { x: m.left, y: m.top, w: canvas.width - m.left - m.right,
      h: canvas.height - m.top - m.bottom - m.bar };
  }

  function drawAxes(ctx, spec, box) {
    const [x0, x1, y0, y1] = spec.extent;
    ctx.strokeStyle = "#444"; ctx.lineWidth = 1;
    ctx.strokeRect(box.x - 0.5, box.y - 0.5, box.w + 1, box.h + 1);
    ctx.fillStyle = "#222"; ctx.font = FONT; ctx.textAlign = "center"; ctx.textBaseline = "top";
    ctx.beginPath();
    spec.xticks.forEach(([v, text]) => {
      const x = Math.round(box.x + ((v - x0) / (x1 - x0)) * box.w) + 0.5;
      ctx.moveTo(x, box.y + box.h); ctx.lineTo(x, box.y + box.h + 4);
      ctx.fillText(text, x, box.y + box.h + 6);
    });
    ctx.fillText("x₁", box.x + box.w / 2, box.y + box.h + 22);
    ctx.textAlign = "right"; ctx.textBaseline = "middle";
    spec.yticks.forEach(([v, text]) => {
      const y = Math.round(box.y + box.h - ((v - y0) / (y1 - y0)) * box.h) + 0.5;
      ctx.moveTo(box.x, y); ctx.lineTo(box.x - 4, y);
      ctx.fillText(text, box.x - 6, y);
    });
    ctx.stroke();
    ctx.save(); ctx.translate(12, box.y + box.h / 2); ctx.rotate(-Math.PI / 2);
    ctx.textAlign = "center"; ctx.fillText("x₂", 0, 0); ctx.restore();
  }

  // A horizontal colour bar under the box: colourAt(t) for t in [0, 1], ticks [t, "text"].
  function drawColourBar(ctx, box, colourAt, ticks, label) {
    const top = box.y + box.h + PLANE_MARGIN.bottom + 6, h = 12;
    for (let i = 0; i < box.w; i++) {
      ctx.fillStyle = colourAt(i / (box.w - 1));
      ctx.fillRect(box.x + i, top, 1, h);
    }
    ctx.strokeStyle = "#444"; ctx.lineWidth = 1;
    ctx.strokeRect(box.x - 0.5, top - 0.5, box.w + 1, h + 1);
    ctx.fillStyle = "#222"; ctx.font = FONT; ctx.textAlign = "center"; ctx.textBaseline = "top";
    ctx.beginPath();
    ticks.forEach(([t, text]) => {
      const x = Math.round(box.x + t * box.w) + 0.5;
      ctx.moveTo(x, top + h); ctx.lineTo(x, top + h + 4);
      ctx.fillText(text, x, top + h + 5);
    });
    ctx.stroke();
    ctx.fillText(label, box.x + box.w / 2, top + h + 24);
  }

  // Bilinear interpolation of an n x n grid (rows up x2) at each pixel of the box.
  function fillBox(ctx, box, n, values, colour) {
    const img = ctx.createImageData(box.w, box.h), W = box.w, H = box.h;
    for (let y = 0; y < H; y++) {
      const gy = ((H - 1 - y) / (H - 1)) * (n - 1), j = Math.min(n - 2, Math.floor(gy)), fy = gy - j;
      for (let x = 0; x < W; x++) {
        const gx = (x / (W - 1)) * (n - 1), i = Math.min(n - 2, Math.floor(gx)), fx = gx - i;
        const v = (1 - fy) * ((1 - fx) * values[j * n + i] + fx * values[j * n + i + 1])
          + fy * ((1 - fx) * values[(j + 1) * n + i] + fx * values[(j + 1) * n + i + 1]);
        const rgb = colour(v), o = 4 * (y * W + x);
        img.data[o] = rgb[0]; img.data[o + 1] = rgb[1]; img.data[o + 2] = rgb[2]; img.data[o + 3] = 255;
      }
    }
    ctx.putImageData(img, box.x, box.y);
  }

  function inBox(ctx, box, draw) {
    ctx.save();
    ctx.beginPath(); ctx.rect(box.x, box.y, box.w, box.h); ctx.clip();
    ctx.translate(box.x, box.y);
    draw();
    ctx.restore();
  }

  function drawProba(canvas, logits, n, spec, points, test) {
    const ctx = canvas.getContext("2d"), box = planeBox(canvas);
    ctx.fillStyle = "#fff"; ctx.fillRect(0, 0, canvas.width, canvas.height);
    const band = (p) => spec.bands[Math.max(0, Math.min(9, Math.floor(10 * p)))];
    fillBox(ctx, box, n, logits, (a) => band(1 / (1 + Math.exp(-a))));
    inBox(ctx, box, () => {
      ctx.strokeStyle = "#000";
      spec.levels.forEach((p) => {
        ctx.lineWidth = p === 0.5 ? 2 : 1;
        ctx.beginPath();
        contours(logits, n, Math.log(p / (1 - p)), box.w, box.h).forEach(([[x0, y0], [x1, y1]]) => {
          ctx.moveTo(x0, y0); ctx.lineTo(x1, y1);
        });
        ctx.stroke();
      });
      if (points) drawPoints(ctx, points, spec, box.w, box.h, test);
    });
    drawAxes(ctx, spec, box);
    drawColourBar(ctx, box, (t) => { const c = band(t); return `rgb(${c[0]},${c[1]},${c[2]})`; },
      [0, ...spec.levels, 1].map((p) => [p, String(p)]), "P(y = 1 | x)");
  }

  function drawScalar(canvas, values, lut, n, spec, panel, points, test) {
    const ctx = canvas.getContext("2d"), box = planeBox(canvas);
    ctx.fillStyle = "#fff"; ctx.fillRect(0, 0, canvas.width, canvas.height);
    fillBox(ctx, box, n, values, (v) => {
      const k = 3 * Math.round(v);
      return [lut[k], lut[k + 1], lut[k + 2]];
    });
    inBox(ctx, box, () => { if (points) drawPoints(ctx, points, spec, box.w, box.h, test); });
    drawAxes(ctx, spec, box);
    const [lo, hi] = panel.range;
    drawColourBar(ctx, box, (t) => {
      const k = 3 * Math.round(255 * t);
      return `rgb(${lut[k]},${lut[k + 1]},${lut[k + 2]})`;
    }, panel.ticks.map(([v, text]) => [(v - lo) / (hi - lo), text]), panel.title.split(",")[0]);
  }

  // --- the evidence heat map -----------------------------------------------------------------

  // (top and right: room for the ring of a setting in the top row or the last column, RING
  // wide, issue 36.19)
  const RING = { radius: 7, width: 3 };
  const HEAT_MARGIN = { left: 46, bottom: 40, top: 11, right: 11 };

  function drawHeat(canvas, panel, heat, lut, row, col) {
    const ctx = canvas.getContext("2d"), W = canvas.width, H = canvas.height, m = HEAT_MARGIN;
    const w = W - m.left - m.right, h = H - m.top - m.bottom;
    const cw = w / panel.cols, ch = h / panel.rows;
    ctx.fillStyle = "#fff"; ctx.fillRect(0, 0, W, H);
    for (let r = 0; r < panel.rows; r++) {
      for (let c = 0; c < panel.cols; c++) {
        const v = heat[r * panel.cols + c];
        ctx.fillStyle = `rgb(${lut[3 * v]},${lut[3 * v + 1]},${lut[3 * v + 2]})`;
        ctx.fillRect(m.left + c * cw, m.top + h - (r + 1) * ch, Math.ceil(cw), Math.ceil(ch));
      }
    }
    ctx.fillStyle = "rgba(255,255,255,0.75)";          // the settings the sliders reach
    panel.row_cells.forEach((r) => panel.col_cells.forEach((c) => {
      ctx.fillRect(m.left + (c + 0.5) * cw - 1, m.top + h - (r + 0.5) * ch - 1, 2, 2);
    }));
    const x = m.left + (panel.col_cells[col] + 0.5) * cw, y = m.top + h - (panel.row_cells[row] + 0.5) * ch;
    ctx.beginPath(); ctx.arc(x, y, RING.radius, 0, 2 * Math.PI);
    ctx.lineWidth = RING.width; ctx.strokeStyle = "#fff"; ctx.stroke();
    ctx.lineWidth = 1.5; ctx.strokeStyle = "#000"; ctx.stroke();
    // where the ring is drawn, its outer edge (tests/test_explorers.py: inside the canvas)
    canvas.dataset.ring = [x, y, RING.radius + RING.width / 2].map((v) => v.toFixed(1)).join(",");
    ctx.fillStyle = "#222"; ctx.font = "13px sans-serif"; ctx.textAlign = "center";
    panel.xticks.forEach(([pos, k]) => ctx.fillText(power(k), m.left + pos * cw, H - m.bottom + 15));
    ctx.fillText(panel.xlabel, m.left + w / 2, H - 6);
    ctx.textAlign = "right";
    panel.yticks.forEach(([pos, k]) => ctx.fillText(power(k), m.left - 4, m.top + h - pos * ch + 4));
    ctx.save(); ctx.translate(12, m.top + h / 2); ctx.rotate(-Math.PI / 2);
    ctx.textAlign = "center"; ctx.fillText(panel.ylabel, 0, 0); ctx.restore();
  }

  function heatAt(panel, canvas, event) {
    const rect = canvas.getBoundingClientRect(), m = HEAT_MARGIN;
    const sx = canvas.width / rect.width, sy = canvas.height / rect.height;
    const x = (event.clientX - rect.left) * sx - m.left, y = (event.clientY - rect.top) * sy - m.top;
    const w = canvas.width - m.left - m.right, h = canvas.height - m.top - m.bottom;
    const c = (x / w) * panel.cols - 0.5, r = ((h - y) / h) * panel.rows - 0.5;
    const nearest = (cells, v) => cells.reduce((best, cell, k) =>
      Math.abs(cell - v) < Math.abs(cells[best] - v) ? k : best, 0);
    return [nearest(panel.row_cells, r), nearest(panel.col_cells, c)];
  }

  // --- one explorer --------------------------------------------------------------------------

  async function setup(holder) {
    const spec = JSON.parse(holder.querySelector("script").textContent);
    const figure = document.getElementById(holder.dataset.figure);
    if (!figure || !window.DecompressionStream) return;     // the static figure stays
    const blob = await inflate(spec.data);
    const arr = (name) => blob.subarray(spec.arrays[name][0], spec.arrays[name][0] + spec.arrays[name][1]);
    const aspect = (spec.extent[3] - spec.extent[2]) / (spec.extent[1] - spec.extent[0]);
    const widthSlider = spec.sliders.findIndex((s) => s.key === "l");
    const s2Slider = spec.sliders.findIndex((s) => s.key === "s2");

    const live = el("div", { class: "blc-explorer-live", "data-ready": "0" });
    const inner = el("div", { class: "blc-explorer-body" });     // (live: the width it queries)
    live.appendChild(inner);
    const controls = el("div", { class: "blc-explorer-controls" });
    const state = spec.sliders.map((s) => s.initial);
    const inputs = spec.sliders.map((s, k) => {
      const input = el("input", { type: "range", min: "0", max: String(s.values.length - 1),
        step: "1", value: String(s.initial), "data-key": s.key, "aria-label": s.label });
      const out = el("output", { text: s.text[s.initial] });
      input.addEventListener("input", () => { state[k] = Number(input.value); render(); });
      controls.appendChild(el("label", { class: "blc-explorer-slider" },
        [el("span", { text: s.label + " = " }), out, input]));
      return { input, out };
    });
    const select = el("select", { "aria-label": "points drawn over the contours" });
    spec.points.concat(["no"]).forEach((p) => select.appendChild(el("option", { value: p, text: `${p} points` })));
    select.addEventListener("change", render);
    controls.appendChild(el("label", { class: "blc-explorer-slider" }, [el("span", { text: "show " }), select]));
    inner.appendChild(controls);

    // On a phone every panel is stacked: the first panel and the numbers, then the others, then
    // the note. Where the column is wide enough (explorer.css), the two probability panels stand
    // side by side under the sliders, the first panel and the numbers below them (issue 36.19).
    const top = el("div", { class: "blc-explorer-top" });
    const panels = el("div", { class: "blc-explorer-panels" });
    const m = PLANE_MARGIN, W = 340, plotW = W - m.left - m.right;
    const canvases = spec.panels.map((p, index) => {
      const H = p.type === "heat" ? 300 : m.top + Math.round(plotW * aspect) + m.bottom + m.bar;
      const canvas = el("canvas", { width: String(W), height: String(H), role: "img",
        "data-panel": p.array, "aria-label": p.title });
      const box = el("div", { class: "blc-explorer-panel" + (p.type === "heat" ? " blc-explorer-heat" : "") },
        [el("div", { class: "blc-explorer-title", text: p.title }), canvas]);
      if (p.scale) {
        const bar = el("div", { class: "blc-explorer-scale" }, [el("span", { text: p.scale[0] }),
          el("span", { class: "blc-explorer-ramp blc-ramp-" + p.lut }), el("span", { text: p.scale[1] })]);
        box.appendChild(bar);
      }
      if (p.type === "heat") {
        canvas.addEventListener("click", (event) => {
          const [r, c] = heatAt(p, canvas, event);
          state[0] = r; state[1] = c; render();
        });
      }
      (index === 0 ? top : panels).appendChild(box);
      return canvas;
    });

    const table = el("table", { class: "blc-explorer-numbers" });
    const body = el("tbody");
    const cells = spec.numbers.labels.map((label, k) => {
      const td = el("td", { "data-key": spec.numbers.keys[k] });
      body.appendChild(el("tr", {}, [el("th", { scope: "row", text: label }), td]));
      return td;
    });
    table.appendChild(body);
    top.appendChild(table);
    inner.appendChild(top);
    inner.appendChild(panels);
    // the note where a width's bumps are too narrow to draw: below the panels, in a space kept
    // for the longest note, so that its coming and going moves nothing (issue 36.19)
    const note = el("p", { class: "blc-explorer-note", role: "status" });
    inner.appendChild(note);
    inner.appendChild(el("p", { class: "blc-explorer-key",
      text: "Shading and contours: P(y = 1 | x) at " +
        spec.levels.map((p) => (p === 0.5 ? "0.5 (thick)" : String(p))).join(", ") + "; " +
        "dots: training points, rings: test points (blue y = 0, vermillion y = 1)." }));

    const lut = spec.arrays.viridis ? arr("viridis") : null;
    function render() {
      let frame = 0;
      spec.sliders.forEach((s, k) => {
        frame = frame * s.values.length + state[k];
        inputs[k].input.value = String(state[k]);
        inputs[k].out.textContent = s.text[state[k]];
      });
      const shown = select.value === "no" ? null : arr(select.value);
      const test = select.value === "test";
      // each width's plane has its own points per axis; its frames follow one another by s2
      const plane = spec.planes[widthSlider < 0 ? 0 : state[widthSlider]], n = plane.n;
      const start = plane.offset + state[s2Slider] * n * n, stop = start + n * n;
      spec.panels.forEach((p, k) => {
        if (p.type === "heat") drawHeat(canvases[k], p, arr("heat"), lut, state[0], state[1]);
        else if (p.type === "proba") {
          drawProba(canvases[k], decodeLogits(arr(p.array).subarray(start, stop), spec), n, spec,
            shown, test);
        } else {
          const values = arr(p.array).subarray(state[s2Slider] * n * n, (state[s2Slider] + 1) * n * n);
          drawScalar(canvases[k], values, lut, n, spec, p, shown, test);
        }
      });
      note.textContent = plane.note;
      note.style.visibility = plane.note ? "visible" : "hidden";
      spec.numbers.values[frame].forEach((v, k) => { cells[k].textContent = v; });
      const where = spec.sliders.map((s, k) => `${s.label} = ${s.text[state[k]]}`).join(", ");
      canvases.forEach((c, k) => c.setAttribute("aria-label", `${spec.panels[k].title} at ${where}`));
      live.dataset.frame = String(frame);
    }
    render();
    const caption = figure.querySelector("figcaption");
    figure.insertBefore(live, caption);
    figure.classList.add("blc-explorer-on");
    const notes = Array.from(new Set(spec.planes.map((p) => p.note).filter((t) => t)));
    let reservedAt = -1;
    const reserve = () => {             // the note's space: the tallest note at this width
      if (note.clientWidth === reservedAt) return;
      reservedAt = note.clientWidth;
      const shown = note.textContent;
      note.style.minHeight = "0";
      let tallest = 0;
      notes.forEach((text) => { note.textContent = text; tallest = Math.max(tallest, note.offsetHeight); });
      note.textContent = shown;
      note.style.minHeight = tallest + "px";
    };
    if (notes.length) {
      reserve();
      if (window.ResizeObserver) new ResizeObserver(reserve).observe(live);
    } else {
      note.style.display = "none";
    }
    live.dataset.ready = "1";
  }

  function start() {
    document.querySelectorAll(".blc-explorer").forEach((holder) => {
      setup(holder).catch((err) => console.warn("explorer: static figure kept:", err));
    });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
