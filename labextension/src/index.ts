/**
 * Loom in JupyterLab 4 and Notebook 7: the Loom language for `.loom` files (a file type with
 * an icon) and for `%%loom` notebook cells, plus the stylesheet of rendered Loom outputs
 * (style/, loaded with the extension, so outputs are styled trusted or not).
 */
import { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { IEditorLanguageRegistry } from '@jupyterlab/codemirror';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { LabIcon } from '@jupyterlab/ui-components';

import { loom, wordCounts } from './language';

export const MIME = 'text/x-loom';
const MAGIC = /^%%loom\b/;

const ICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24" width="16">
<rect x="2" y="2" width="20" height="20" rx="3" fill="#24548f"/>
<path d="M6 6v12M10 6v12M14 6v12M18 6v12" stroke="#9ec5f0" stroke-width="1.6"/>
<path d="M4 9h16M4 15h16" stroke="#ffd27f" stroke-width="2"/>
</svg>`;

export const loomIcon = new LabIcon({ name: 'loom-jupyterlab:loom', svgstr: ICON_SVG });

interface IMimeModel {
  mimeType: string;
  type: string;
  sharedModel: { getSource(): string };
  contentChanged: { connect(fn: () => void): void };
  mimeTypeChanged: { connect(fn: (sender: unknown, args: { newValue: string }) => void): void };
}

const watched = new WeakSet<object>();

/** Give a code cell the Loom language while its source starts with `%%loom`. */
function watchCell(model: IMimeModel): void {
  if (model.type !== 'code' || watched.has(model)) {
    return;
  }
  watched.add(model);
  let kernelMime = model.mimeType === MIME ? 'text/x-ipython' : model.mimeType;
  const update = (): void => {
    const isLoom = MAGIC.test(model.sharedModel.getSource());
    if (isLoom && model.mimeType !== MIME) {
      model.mimeType = MIME;
    } else if (!isLoom && model.mimeType === MIME) {
      model.mimeType = kernelMime;
    }
  };
  model.contentChanged.connect(update);
  // the notebook sets every cell's mime type from the kernel's language when that arrives
  model.mimeTypeChanged.connect((_, args) => {
    if (args.newValue !== MIME) {
      kernelMime = args.newValue;
      void Promise.resolve().then(update);
    }
  });
  update();
}

function watchNotebook(panel: NotebookPanel): void {
  const attach = (): void => {
    const cells = panel.content.model?.cells;
    if (!cells) {
      return;
    }
    for (let i = 0; i < cells.length; i++) {
      watchCell(cells.get(i) as unknown as IMimeModel);
    }
    cells.changed.connect(() => {
      for (let i = 0; i < cells.length; i++) {
        watchCell(cells.get(i) as unknown as IMimeModel);
      }
    });
  };
  panel.content.modelChanged.connect(attach);
  void panel.context.ready.then(attach);
  attach();
}

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'loom-jupyterlab:plugin',
  description: 'Loom language for .loom files and %%loom cells; stylesheet of Loom outputs.',
  autoStart: true,
  requires: [IEditorLanguageRegistry],
  optional: [INotebookTracker],
  activate: (
    app: JupyterFrontEnd,
    languages: IEditorLanguageRegistry,
    notebooks: INotebookTracker | null
  ) => {
    languages.addLanguage({
      name: 'loom',
      displayName: 'Loom',
      mime: MIME,
      extensions: ['loom', 'loom-test'],
      support: loom()
    });
    app.docRegistry.addFileType({
      name: 'loom',
      displayName: 'Loom',
      extensions: ['.loom', '.loom-test'],
      mimeTypes: [MIME],
      icon: loomIcon,
      contentType: 'file',
      fileFormat: 'text'
    });
    if (notebooks) {
      notebooks.widgetAdded.connect((_, panel) => watchNotebook(panel));
      notebooks.forEach(watchNotebook);
    }
    (window as unknown as { loomJupyterlab: object }).loomJupyterlab = { wordCounts };
  }
};

export default plugin;
