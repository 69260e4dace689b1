import { render } from 'preact';
import { App } from './app.tsx';
import { applyTheme, currentTheme } from './theme.ts';
import './styles.css';

applyTheme(currentTheme());
render(<App />, document.getElementById('root')!);
