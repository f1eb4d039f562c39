// QR codes for short URLs, drawn as SVG elements in the page (a new link's, and the QR
// dialog's with downloads as PNG or SVG at the size chosen). The encoder is the `uqr` package, served beside this
// module as ./uqr.js (see assets.ts; uqr.d.ts gives tsc its types).
import { encode } from './uqr.js';
import { byId } from './dom.js';

const SVG_NS = 'http://www.w3.org/2000/svg';

/** The dialog's short URL and the object URLs of its downloads (revoked when replaced). */
const dialog = {
  url: '',
  svgUrl: /** @type {string | null} */ (null),
  pngUrl: /** @type {string | null} */ (null),
};

/**
 * The QR code's modules, at the error correction that fits (M, else L), or null when the
 * text is too long for any.
 * @param {string} text
 */
function modules(text) {
  try {
    return encode(text, { ecc: 'M', border: 4 });
  } catch {
    try {
      return encode(text, { ecc: 'L', border: 4 });
    } catch {
      return null;
    }
  }
}

/**
 * The QR code of `text` as an <svg>, or a line saying it is too long for one.
 * @param {string} text
 * @param {string} label accessible name
 * @returns {SVGSVGElement | HTMLParagraphElement}
 */
export function qrCode(text, label) {
  const qr = modules(text);
  if (qr === null) {
    const p = document.createElement('p');
    p.className = 'qr-too-long';
    p.textContent = 'This short URL is too long for a QR code.';
    return p;
  }
  const svg = document.createElementNS(SVG_NS, 'svg');
  svg.setAttribute('xmlns', SVG_NS);
  svg.setAttribute('viewBox', `0 0 ${qr.size} ${qr.size}`);
  svg.setAttribute('shape-rendering', 'crispEdges');
  svg.setAttribute('role', 'img');
  svg.setAttribute('aria-label', label);
  // Dark on light whatever the theme: that is what scanners read.
  const background = document.createElementNS(SVG_NS, 'rect');
  background.setAttribute('width', String(qr.size));
  background.setAttribute('height', String(qr.size));
  background.setAttribute('fill', '#ffffff');
  const path = document.createElementNS(SVG_NS, 'path');
  /** @type {string[]} */
  const d = [];
  qr.data.forEach((row, y) => {
    for (let x = 0; x < row.length; x++) {
      if (!row[x]) continue;
      let run = 1;
      while (row[x + run]) run++;
      d.push(`M${x} ${y}h${run}v1h-${run}z`);
      x += run - 1;
    }
  });
  path.setAttribute('d', d.join(''));
  path.setAttribute('fill', '#000000');
  svg.append(background, path);
  return svg;
}

/** The size picked for downloads, in pixels. */
function pickedSize() {
  const size = Number(byId('qr-size', HTMLSelectElement).value);
  return Number.isInteger(size) && size > 0 ? size : 512;
}

/**
 * A file name for the download: the shortcode's, safe on any file system.
 * @param {string} ext
 */
function fileName(ext) {
  const code = dialog.url.slice(dialog.url.lastIndexOf('/') + 1).replace(/[^A-Za-z0-9._-]/g, '_');
  return `shortlink-${code || 'qr'}-${pickedSize()}.${ext}`;
}

/** Points the SVG download at the image, at the size picked. */
function prepareSvg() {
  const image = byId('qr-dialog-image').querySelector('svg');
  const download = byId('qr-download', HTMLAnchorElement);
  if (dialog.svgUrl !== null) URL.revokeObjectURL(dialog.svgUrl);
  dialog.svgUrl = null;
  if (image === null) {
    download.removeAttribute('href');
    download.hidden = true;
    return;
  }
  const copy = /** @type {SVGSVGElement} */ (image.cloneNode(true));
  const size = String(pickedSize());
  copy.setAttribute('width', size);
  copy.setAttribute('height', size);
  dialog.svgUrl = URL.createObjectURL(new Blob([new XMLSerializer().serializeToString(copy)], { type: 'image/svg+xml' }));
  download.href = dialog.svgUrl;
  download.download = fileName('svg');
  download.hidden = false;
}

/** Draws the QR code as a PNG of the size picked, dark on white, and downloads it. */
async function downloadPng() {
  const qr = modules(dialog.url);
  if (qr === null) return;
  const size = pickedSize();
  const canvas = document.createElement('canvas');
  canvas.width = size;
  canvas.height = size;
  const context = canvas.getContext('2d');
  if (context === null) return;
  context.fillStyle = '#ffffff';
  context.fillRect(0, 0, size, size);
  context.fillStyle = '#000000';
  const unit = size / qr.size;
  qr.data.forEach((row, y) => {
    row.forEach((dark, x) => {
      if (!dark) return;
      // Whole pixels, edges rounded, so neighbouring modules meet without seams.
      const left = Math.round(x * unit);
      const top = Math.round(y * unit);
      context.fillRect(left, top, Math.round((x + 1) * unit) - left, Math.round((y + 1) * unit) - top);
    });
  });
  const blob = await new Promise((resolve) => canvas.toBlob(resolve, 'image/png'));
  if (!(blob instanceof Blob)) return;
  if (dialog.pngUrl !== null) URL.revokeObjectURL(dialog.pngUrl);
  dialog.pngUrl = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = dialog.pngUrl;
  a.download = fileName('png');
  a.click();
}

/**
 * Opens the QR dialog for a short URL, with downloads of the same image as PNG and SVG.
 * @param {string} url
 */
export function openQrDialog(url) {
  dialog.url = url;
  const image = qrCode(url, `QR code for ${url}`);
  byId('qr-dialog-image').replaceChildren(image);
  byId('qr-dialog-url').textContent = url;
  byId('qr-png').hidden = !(image instanceof SVGElement);
  prepareSvg();
  byId('qr-dialog', HTMLDialogElement).showModal();
}

/** Listens to the QR dialog's size and PNG download. */
export function wireQrDialog() {
  byId('qr-size', HTMLSelectElement).addEventListener('change', prepareSvg);
  byId('qr-png', HTMLButtonElement).addEventListener('click', () => void downloadPng());
}
