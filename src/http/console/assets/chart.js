// A line chart in SVG, a few lines of our own: a rolling window of samples
// per series, the y axis from zero to the largest value, labels as text nodes.

const SVG = 'http://www.w3.org/2000/svg';

function svg(tag, attributes, text) {
  const element = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, String(value));
  if (text !== undefined) element.textContent = text;
  return element;
}

/** series: [{ className, points: [{ t, v }] }]; draws into a new <svg> (the legend is the caller's). */
export function lineChart(series, { width = 900, height = 240, unit = '' } = {}) {
  const pad = { left: 48, right: 12, top: 12, bottom: 22 };
  const all = series.flatMap((s) => s.points);
  const root = svg('svg', { viewBox: `0 0 ${width} ${height}`, class: 'chart', role: 'img' });
  if (all.length < 2) {
    root.append(svg('text', { x: width / 2, y: height / 2, 'text-anchor': 'middle', class: 'chart-note' }, 'Collecting samples…'));
    return root;
  }
  const t0 = Math.min(...all.map((p) => p.t));
  const t1 = Math.max(...all.map((p) => p.t));
  const top = Math.max(1, ...all.map((p) => p.v));
  const x = (t) => pad.left + ((t - t0) / Math.max(1, t1 - t0)) * (width - pad.left - pad.right);
  const y = (v) => height - pad.bottom - (v / top) * (height - pad.top - pad.bottom);
  for (const v of [0, top / 2, top]) {
    root.append(svg('line', { x1: pad.left, x2: width - pad.right, y1: y(v), y2: y(v), class: 'chart-grid' }));
    root.append(svg('text', { x: pad.left - 6, y: y(v) + 4, 'text-anchor': 'end', class: 'chart-axis' }, `${Math.round(v * 10) / 10}${unit}`));
  }
  root.append(svg('text', { x: pad.left, y: height - 4, class: 'chart-axis' }, `the last ${Math.round((t1 - t0) / 1000)} s`));
  for (const s of series) {
    const d = s.points.map((p, j) => `${j === 0 ? 'M' : 'L'}${x(p.t).toFixed(1)},${y(p.v).toFixed(1)}`).join(' ');
    root.append(svg('path', { d, class: `chart-line ${s.className}` }));
  }
  return root;
}
