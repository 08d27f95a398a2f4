// How numbers, sizes, times and record bytes read on the page. Record bytes
// arrive as base64 and are shown as text, JSON or hex, always as text nodes.

const numbers = new Intl.NumberFormat('en');

export const count = (n) => (n === null || n === undefined ? '–' : numbers.format(n));

export function bytes(n, exact = true) {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = n;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${exact ? '' : '≥ '}${unit === 0 ? value : value.toFixed(1)} ${units[unit]}`;
}

export const time = (ms) => (ms === null || ms === undefined || ms < 0 ? '–' : new Date(ms).toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z'));

export function duration(ms) {
  if (ms < 1000) return `${ms} ms`;
  if (ms < 120_000) return `${Math.round(ms / 1000)} s`;
  if (ms < 7_200_000) return `${Math.round(ms / 60_000)} min`;
  return `${Math.round(ms / 3_600_000)} h`;
}

export function decodeBase64(text) {
  const binary = atob(text);
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return out;
}

const utf8 = new TextDecoder('utf-8');

/** Record bytes (base64, or null) as the chosen format shows them. */
export function recordBytes(base64, format) {
  if (base64 === null) return 'null';
  const data = decodeBase64(base64);
  if (format === 'hex') return [...data].map((b) => b.toString(16).padStart(2, '0')).join(' ');
  const text = utf8.decode(data);
  if (format === 'json') {
    try {
      return JSON.stringify(JSON.parse(text), null, 2);
    } catch {
      return `(not JSON) ${text}`;
    }
  }
  return text;
}
