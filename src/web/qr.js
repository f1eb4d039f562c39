// QR codes for short URLs, drawn as SVG elements in the page (a new link's, and the QR
// dialog's with its SVG download). The encoder is the `uqr` package, served beside this
// module as ./uqr.js (see assets.ts; uqr.d.ts gives tsc its types).
import { encode } from './uqr.js';
import { byId } from './dom.js';

const SVG_NS = 'http://www.w3.org/2000/svg';

/**
 * The object URL the dialog's download link holds, revoked when the next one replaces it.
 * @type {string | null}
 */
let downloadUrl = null;

/**
 * The QR code of `text` as an <svg>, or a line saying it is too long for one.
 * @param {string} text
 * @param {string} label accessible name
 * @returns {SVGSVGElement | HTMLParagraphElement}
 */
export function qrCode(text, label) {
  let qr;
  try {
    qr = encode(text, { ecc: 'M', border: 4 });
  } catch {
    try {
      qr = encode(text, { ecc: 'L', border: 4 });
    } catch {
      const p = document.createElement('p');
      p.className = 'qr-too-long';
      p.textContent = 'This short URL is too long for a QR code.';
      return p;
    }
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

/**
 * Opens the QR dialog for a short URL, with a download of the same image as an SVG file.
 * @param {string} url
 */
export function openQrDialog(url) {
  const image = qrCode(url, `QR code for ${url}`);
  byId('qr-dialog-image').replaceChildren(image);
  byId('qr-dialog-url').textContent = url;
  const download = byId('qr-download', HTMLAnchorElement);
  if (downloadUrl !== null) URL.revokeObjectURL(downloadUrl);
  downloadUrl = null;
  if (image instanceof SVGElement) {
    const blob = new Blob([new XMLSerializer().serializeToString(image)], { type: 'image/svg+xml' });
    downloadUrl = URL.createObjectURL(blob);
    download.href = downloadUrl;
    download.hidden = false;
  } else {
    download.removeAttribute('href');
    download.hidden = true;
  }
  byId('qr-dialog', HTMLDialogElement).showModal();
}
