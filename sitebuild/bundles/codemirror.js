// The entry of the editor's bundle (sitebuild/bundle.py runs esbuild on it into
// dist/static/vendor/codemirror/codemirror.js): CodeMirror 6 with Python, served from our files.
export { basicSetup, EditorView } from "codemirror";
export { EditorState, StateEffect, StateField } from "@codemirror/state";
export { Decoration } from "@codemirror/view";
export { python } from "@codemirror/lang-python";
