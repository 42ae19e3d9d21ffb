/* Interactive explorers (issue 21): sliders over settings precomputed in a chapter.
 *
 * A chapter's output holds <div class="blc-explorer" hidden data-figure="ID"> with a JSON
 * description and its arrays (uint8, deflated, base64), written by lib/book/explorer.py. This
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

  function drawProba(canvas, logits, spec, points, test) {
    const ctx = canvas.getContext("2d"), W = canvas.width, H = canvas.height, n = spec.n;
    const img = ctx.createImageData(W, H);
    for (let y = 0; y < H; y++) {
      const gy = ((H - 1 - y) / (H - 1)) * (n - 1), j = Math.min(n - 2, Math.floor(gy)), fy = gy - j;
      for (let x = 0; x < W; x++) {
        const gx = (x / (W - 1)) * (n - 1), i = Math.min(n - 2, Math.floor(gx)), fx = gx - i;
        const a = (1 - fy) * ((1 - fx) * logits[j * n + i] + fx * logits[j * n + i + 1])
          + fy * ((1 - fx) * logits[(j + 1) * n + i] + fx * logits[(j + 1) * n + i + 1]);
        const band = spec.bands[Math.min(9, Math.floor(10 / (1 + Math.exp(-a))))];
        const o = 4 * (y * W + x);
        img.data[o] = band[0]; img.data[o + 1] = band[1]; img.data[o + 2] = band[2];
        img.data[o + 3] = 255;
      }
    }
    ctx.putImageData(img, 0, 0);
    ctx.strokeStyle = "#000";
    spec.levels.forEach((p) => {
      ctx.lineWidth = p === 0.5 ? 2 : 1;
      ctx.beginPath();
      contours(logits, n, Math.log(p / (1 - p)), W, H).forEach(([[x0, y0], [x1, y1]]) => {
        ctx.moveTo(x0, y0); ctx.lineTo(x1, y1);
      });
      ctx.stroke();
    });
    if (points) drawPoints(ctx, points, spec, W, H, test);
    ctx.strokeStyle = "#444"; ctx.lineWidth = 1; ctx.strokeRect(0.5, 0.5, W - 1, H - 1);
  }

  function drawScalar(canvas, values, lut, n, spec, points, test) {
    const ctx = canvas.getContext("2d"), W = canvas.width, H = canvas.height;
    const img = ctx.createImageData(W, H);
    for (let y = 0; y < H; y++) {
      const gy = ((H - 1 - y) / (H - 1)) * (n - 1), j = Math.min(n - 2, Math.floor(gy)), fy = gy - j;
      for (let x = 0; x < W; x++) {
        const gx = (x / (W - 1)) * (n - 1), i = Math.min(n - 2, Math.floor(gx)), fx = gx - i;
        const v = Math.round((1 - fy) * ((1 - fx) * values[j * n + i] + fx * values[j * n + i + 1])
          + fy * ((1 - fx) * values[(j + 1) * n + i] + fx * values[(j + 1) * n + i + 1]));
        const o = 4 * (y * W + x);
        img.data[o] = lut[3 * v]; img.data[o + 1] = lut[3 * v + 1]; img.data[o + 2] = lut[3 * v + 2];
        img.data[o + 3] = 255;
      }
    }
    ctx.putImageData(img, 0, 0);
    if (points) drawPoints(ctx, points, spec, W, H, test);
  }

  // --- the evidence heat map -----------------------------------------------------------------

  const HEAT_MARGIN = { left: 46, bottom: 40, top: 6, right: 6 };

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
    ctx.beginPath(); ctx.arc(x, y, 7, 0, 2 * Math.PI);
    ctx.lineWidth = 3; ctx.strokeStyle = "#fff"; ctx.stroke();
    ctx.lineWidth = 1.5; ctx.strokeStyle = "#000"; ctx.stroke();
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
    const n2 = spec.n * spec.n;
    const aspect = (spec.extent[3] - spec.extent[2]) / (spec.extent[1] - spec.extent[0]);

    const live = el("div", { class: "blc-explorer-live", "data-ready": "0" });
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
    live.appendChild(controls);

    // The first panel beside the numbers, the others below them.
    const top = el("div", { class: "blc-explorer-top" });
    const panels = el("div", { class: "blc-explorer-panels" });
    const canvases = spec.panels.map((p, index) => {
      const W = p.type === "heat" ? 340 : 320;
      const H = p.type === "heat" ? 300 : Math.round(320 * aspect);
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
    live.appendChild(top);
    live.appendChild(panels);
    live.appendChild(el("p", { class: "blc-explorer-key",
      text: "Shading and contours: P(y = 1 | x) at 0.1, 0.3, 0.5 (thick), 0.7, 0.9; " +
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
      spec.panels.forEach((p, k) => {
        if (p.type === "heat") drawHeat(canvases[k], p, arr("heat"), lut, state[0], state[1]);
        else if (p.type === "proba") {
          const codes = arr(p.array).subarray(frame * n2, (frame + 1) * n2);
          drawProba(canvases[k], decodeLogits(codes, spec), spec, shown, test);
        } else drawScalar(canvases[k], arr(p.array).subarray(frame * n2, (frame + 1) * n2), lut,
          spec.n, spec, shown, test);
      });
      spec.numbers.values[frame].forEach((v, k) => { cells[k].textContent = v; });
      const where = spec.sliders.map((s, k) => `${s.label} = ${s.text[state[k]]}`).join(", ");
      canvases.forEach((c, k) => c.setAttribute("aria-label", `${spec.panels[k].title} at ${where}`));
      live.dataset.frame = String(frame);
    }
    render();
    const caption = figure.querySelector("figcaption");
    figure.insertBefore(live, caption);
    figure.classList.add("blc-explorer-on");
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
