import { BatonProvider } from '@baton/react';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App';
import { baton } from './client';
import { AnnouncerProvider } from './Announcer';
import './styles.css';

const root = document.getElementById('root');
if (!root) throw new Error('index.html has no #root');

createRoot(root).render(
  <StrictMode>
    <BatonProvider client={baton}>
      <AnnouncerProvider>
        <App />
      </AnnouncerProvider>
    </BatonProvider>
  </StrictMode>,
);
