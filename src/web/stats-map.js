// The countries of the statistics on a world map. Until the map's shapes are served, the
// card stays hidden and the Countries table says it all.

/** @param {HTMLElement} box */
export function renderMap(box) {
  box.replaceChildren();
}
