import { LabIcon } from '@jupyterlab/ui-components';

const svgstr = `<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 24 24">
  <g class="jp-icon3" fill="#616161">
    <path d="M7 7h10v10H7zm2 2v6h6V9z"/>
    <path d="M9 2h2v3H9zm4 0h2v3h-2zM9 19h2v3H9zm4 0h2v3h-2zM2 9h3v2H2zm0 4h3v2H2zm17-4h3v2h-3zm0 4h3v2h-3z"/>
    <path d="M5 5h14v14H5zm2 2v10h10V7z" fill-opacity=".55"/>
  </g>
</svg>`;

/** The GPU chip shown on the sidebar tab. */
export const gpuIcon = new LabIcon({ name: 'jupyter-gpuprof:gpu', svgstr });
