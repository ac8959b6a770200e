/*
 * Ferry operator console: a single-page app over the JSON API under /console/api (docs/console.md).
 * Plain JavaScript, no libraries, no build step. It runs under a strict Content-Security-Policy, so it never uses
 * inline styles, eval or innerHTML: every value reaches the DOM through textContent or an attribute.
 */
(function () {
  'use strict';

  const API = '/console/api';
  const SVG_NS = 'http://www.w3.org/2000/svg';
  const DEFAULT_LIMIT = 50;
  const ACTIVITY_REFRESH_MS = 5000;

  const state = { operator: null, csrf: null };
  let routeToken = 0;      // bumped by every render: answers that arrive for an older page are dropped
  let timers = [];         // intervals owned by the page on screen, cleared when it goes
  let pendingFlash = null; // a message for the top of the next page rendered (after an action that re-renders)
  let els = null;          // the fixed elements of index.html, found once the DOM is ready

  // ---------------------------------------------------------------------------------------------------------------
  // DOM helpers

  function append(el, kids) {
    for (const kid of kids) {
      if (kid == null || kid === false) continue;
      if (Array.isArray(kid)) append(el, kid);
      else el.appendChild(kid instanceof Node ? kid : document.createTextNode(String(kid)));
    }
    return el;
  }

  // Props become attributes (null/false are skipped, true is a boolean attribute), on* functions become listeners.
  function setProps(el, props) {
    for (const [key, val] of Object.entries(props || {})) {
      if (val == null || val === false) continue;
      if (key.startsWith('on') && typeof val === 'function') el.addEventListener(key.slice(2), val);
      else el.setAttribute(key, val === true ? '' : String(val));
    }
  }

  function h(tag, props, ...kids) {
    const el = document.createElement(tag);
    setProps(el, props);
    return append(el, kids);
  }

  function svg(tag, props, ...kids) {
    const el = document.createElementNS(SVG_NS, tag);
    setProps(el, props);
    return append(el, kids);
  }

  const enc = encodeURIComponent;
  const link = (href, ...text) => h('a', { href }, ...text);
  const muted = (text) => h('span', { class: 'muted' }, text);

  const paths = {
    user: (id) => `/console/users/${enc(id)}`,
    space: (id) => `/console/spaces/${enc(id)}`,
    collection: (name) => `/console/collections/${enc(name)}`,
    record: (name, id) => `/console/collections/${enc(name)}/${enc(id)}`,
    bucket: (id) => `/console/storage/buckets/${enc(id)}`,
  };

  // ---------------------------------------------------------------------------------------------------------------
  // Formatting

  function num(n) {
    if (n == null || n === '') return muted('—');
    const v = Number(n);
    return Number.isFinite(v) ? v.toLocaleString() : String(n);
  }

  // Local time for reading, the exact ISO value on hover.
  function when(iso) {
    if (!iso) return muted('—');
    const d = new Date(iso);
    if (Number.isNaN(d.getTime())) return String(iso);
    return h('time', { datetime: iso, title: iso }, d.toLocaleString());
  }

  function bytesText(n) {
    let v = Number(n);
    if (!Number.isFinite(v)) return '—';
    const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
    let i = 0;
    while (Math.abs(v) >= 1024 && i < units.length - 1) { v /= 1024; i++; }
    return i === 0 ? `${v} B` : `${v.toFixed(v < 10 ? 1 : 0)} ${units[i]}`;
  }

  function bytes(n) {
    if (n == null) return muted('—');
    return h('span', { title: `${Number(n).toLocaleString()} bytes` }, bytesText(n));
  }

  const yesno = (b) => (b ? 'yes' : 'no');

  // Any JSON value in a table cell; long ones are cut, with the whole value on hover.
  function value(v, max = 80) {
    if (v === null || v === undefined) return muted('null');
    if (typeof v === 'boolean' || typeof v === 'number') return String(v);
    const text = typeof v === 'string' ? v : JSON.stringify(v);
    if (text.length <= max) return text;
    return h('span', { title: text }, text.slice(0, max - 1) + '…');
  }

  // A value shown whole (record page): objects pretty-printed.
  function fullValue(v) {
    if (v === null || v === undefined) return muted('null');
    if (typeof v === 'string') return v;
    return typeof v === 'object' ? h('code', {}, JSON.stringify(v, null, 2)) : String(v);
  }

  function badge(text, kind) {
    return h('span', { class: `badge ${kind || ''}` }, text);
  }

  // ---------------------------------------------------------------------------------------------------------------
  // URL query state: search, offset, order… live in location.search so deep links and the back button keep them.

  function queryInt(q, key, fallback, min, max) {
    const n = parseInt(q.get(key), 10);
    return Number.isFinite(n) ? Math.min(max, Math.max(min, n)) : fallback;
  }
  const limitOf = (q) => queryInt(q, 'limit', DEFAULT_LIMIT, 1, 200);
  const offsetOf = (q) => queryInt(q, 'offset', 0, 0, Number.MAX_SAFE_INTEGER);

  // The current path with some query keys changed (null or '' removes the key).
  function hrefWith(changes) {
    const q = new URLSearchParams(location.search);
    for (const [k, v] of Object.entries(changes)) {
      if (v == null || v === '') q.delete(k);
      else q.set(k, String(v));
    }
    const s = q.toString();
    return location.pathname + (s ? `?${s}` : '');
  }

  // The API query string of a list page: limit/offset always, the other keys only when set.
  function listParams(q, keys = ['search']) {
    const p = new URLSearchParams({ limit: String(limitOf(q)), offset: String(offsetOf(q)) });
    for (const k of keys) if (q.get(k)) p.set(k, q.get(k));
    return `?${p}`;
  }

  // ---------------------------------------------------------------------------------------------------------------
  // API

  class ApiError extends Error {
    constructor(message, status, code, retryAfter) {
      super(message);
      this.status = status;
      this.code = code;
      this.retryAfter = retryAfter;
      this.unauthorized = status === 401;
    }
  }

  // opts.auth === false: the caller handles a 401 itself (sign-in, the first session check, sign-out).
  async function api(method, path, body, opts = {}) {
    const headers = { Accept: 'application/json' };
    if (body !== undefined && body !== null) headers['Content-Type'] = 'application/json';
    if (method !== 'GET' && method !== 'HEAD' && state.csrf) headers['X-CSRF-Token'] = state.csrf;
    let res;
    try {
      res = await fetch(API + path, {
        method,
        headers,
        credentials: 'same-origin',
        body: body == null ? undefined : JSON.stringify(body),
      });
    } catch (err) {
      throw new ApiError('Could not reach the server.', 0, 'network');
    }
    const text = res.status === 204 ? '' : await res.text().catch(() => '');
    let data = null;
    if (text) {
      try { data = JSON.parse(text); } catch (err) { data = null; }
    }
    if (!res.ok) {
      const msg = (data && (data.msg || data.message || data.error_description || data.error)) ||
        `${res.status} ${res.statusText || 'error'}`;
      const err = new ApiError(String(msg), res.status, data && data.error_code, res.headers.get('Retry-After'));
      if (err.unauthorized && opts.auth !== false) sessionEnded();
      throw err;
    }
    return data;
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Session and the two views (sign-in / app)

  function setSession(s) {
    state.operator = (s && s.operator) || { email: '' };
    state.csrf = s && s.csrf_token;
    els.operator.textContent = state.operator.email || '';
  }

  function showApp() {
    els.signinView.hidden = true;
    els.nav.hidden = false;
    els.session.hidden = false;
    els.page.hidden = false;
  }

  function showSignin(note) {
    clearTimers();
    routeToken++; // whatever was loading belongs to the old session
    els.nav.hidden = true;
    els.session.hidden = true;
    els.page.hidden = true;
    els.page.replaceChildren();
    els.page.dataset.loaded = 'false';
    delete els.page.dataset.page;
    els.signinNote.textContent = note || '';
    els.signinNote.hidden = !note;
    els.signinView.hidden = false;
    document.title = 'Sign in · Ferry console';
    els.signinEmail.focus();
  }

  // Any 401 from the API: back to the sign-in form, keeping the URL so the same page shows after signing in.
  function sessionEnded() {
    if (!state.operator) return;
    state.operator = null;
    state.csrf = null;
    showSignin('Your session has ended. Sign in again.');
  }

  function signinError(text) {
    els.signinError.textContent = text;
    els.signinError.hidden = false;
  }

  async function onSignin(event) {
    event.preventDefault();
    els.signinError.hidden = true;
    els.signinError.textContent = '';
    const email = els.signinEmail.value.trim();
    const password = els.signinPassword.value;
    if (!email || !password) { signinError('Enter your e-mail and password.'); return; }
    els.signinSubmit.disabled = true;
    try {
      const s = await api('POST', '/session', { email, password }, { auth: false });
      els.signinPassword.value = '';
      setSession(s);
      showApp();
      await route();
    } catch (err) {
      if (err.status === 401) signinError('Wrong e-mail or password.');
      else if (err.status === 429 && err.retryAfter) signinError(`${err.message} Try again in ${err.retryAfter} s.`);
      else signinError(err.message || 'Sign-in failed.');
    } finally {
      els.signinSubmit.disabled = false;
    }
  }

  async function signOut() {
    try {
      await api('DELETE', '/session', null, { auth: false });
    } catch (err) {
      // A 401 means the session was already gone; anything else still leaves this tab signed out.
    }
    state.operator = null;
    state.csrf = null;
    history.pushState(null, '', '/console');
    showSignin('');
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Router

  const routes = [
    [/^\/console$/, 'overview', pageOverview],
    [/^\/console\/users$/, 'users', pageUsers],
    [/^\/console\/users\/([^/]+)$/, 'user', pageUser],
    [/^\/console\/spaces$/, 'spaces', pageSpaces],
    [/^\/console\/spaces\/([^/]+)$/, 'space', pageSpace],
    [/^\/console\/collections$/, 'collections', pageCollections],
    [/^\/console\/collections\/([^/]+)$/, 'collection', pageCollection],
    [/^\/console\/collections\/([^/]+)\/([^/]+)$/, 'record', pageRecord],
    [/^\/console\/devices$/, 'devices', pageDevices],
    [/^\/console\/activity$/, 'activity', pageActivity],
    [/^\/console\/storage$/, 'storage', pageStorage],
    [/^\/console\/storage\/buckets\/([^/]+)$/, 'bucket', pageBucket],
    [/^\/console\/settings$/, 'settings', pageSettings],
    [/^\/console\/backups$/, 'backups', pageBackups],
    [/^\/console\/log$/, 'log', pageLog],
  ];

  const TITLES = {
    overview: 'Overview', users: 'Users', user: 'User', spaces: 'Spaces', space: 'Space',
    collections: 'Collections', collection: 'Collection', record: 'Record', devices: 'Devices',
    activity: 'Activity', storage: 'Storage', bucket: 'Bucket', settings: 'Settings', backups: 'Backups',
    log: 'Operator log', notfound: 'Not found',
  };

  function match(pathname) {
    const path = pathname.replace(/\/+$/, '');
    for (const [re, name, render] of routes) {
      const m = re.exec(path);
      if (!m) continue;
      try {
        return { name, render, params: m.slice(1).map(decodeURIComponent) };
      } catch (err) {
        break; // a malformed %-escape: no such page
      }
    }
    return { name: 'notfound', render: pageNotFound, params: [] };
  }

  function clearTimers() {
    for (const id of timers) clearInterval(id);
    timers = [];
  }

  function markNav(pathname) {
    const path = pathname.replace(/\/+$/, '') || '/console';
    for (const a of els.nav.querySelectorAll('a[href]')) {
      const href = a.getAttribute('href');
      const active = href === '/console' ? path === '/console' : path === href || path.startsWith(`${href}/`);
      a.classList.toggle('active', active);
      if (active) a.setAttribute('aria-current', 'page');
      else a.removeAttribute('aria-current');
    }
  }

  // Renders the page of the current URL. Never rejects: errors become an .error in main#page.
  async function route(opts = {}) {
    clearTimers();
    const token = ++routeToken;
    if (!state.operator) { if (els.signinView.hidden) showSignin(''); return; }
    const { name, render, params } = match(location.pathname);
    const page = els.page;
    page.dataset.loaded = 'false';
    page.dataset.page = name;
    markNav(location.pathname);
    const ctx = {
      name,
      params,
      query: new URLSearchParams(location.search),
      title: TITLES[name],
      stale: () => token !== routeToken,
      // An interval that lives as long as this page does.
      every(fn, ms) { if (!ctx.stale()) timers.push(setInterval(fn, ms)); },
    };
    let content;
    try {
      content = await render(ctx);
    } catch (err) {
      if (ctx.stale() || err.unauthorized) return;
      content = [h('h1', {}, TITLES[name]), h('p', { class: 'error' }, err.message || String(err))];
    }
    if (ctx.stale()) return;
    page.replaceChildren();
    append(page, [content]); // pages return nested arrays with nulls for optional parts
    document.title = `${ctx.title} · Ferry console`;
    if (pendingFlash) { showMessage(pendingFlash.text, pendingFlash.error); pendingFlash = null; }
    page.dataset.loaded = 'true';
    if (opts.scroll) window.scrollTo(0, 0);
  }

  function navigate(href, replace) {
    const same = href === location.pathname + location.search;
    if (replace || same) history.replaceState(null, '', href);
    else history.pushState(null, '', href);
    return route({ scroll: !same });
  }

  // Same-origin links into the app are handled here; the API (downloads) and assets load normally.
  function onDocumentClick(event) {
    if (event.defaultPrevented || event.button !== 0) return;
    if (event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    const a = event.target instanceof Element ? event.target.closest('a[href]') : null;
    if (!a) return;
    if (a.id === 'signout') { event.preventDefault(); signOut(); return; }
    if ((a.target && a.target !== '_self') || a.hasAttribute('download')) return;
    const url = new URL(a.href, location.href);
    if (url.origin !== location.origin || !/^\/console(\/|$)/.test(url.pathname)) return;
    if (/^\/console\/(api|assets)(\/|$)/.test(url.pathname)) return;
    event.preventDefault();
    if (!state.operator) return;
    navigate(url.pathname + url.search);
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Page building blocks

  // A message at the top of the page (the result of an action, or its error).
  function showMessage(text, isError) {
    let box = els.page.querySelector(':scope > .flash');
    if (!box) {
      box = h('p', { role: 'status' });
      els.page.prepend(box);
    }
    box.className = `flash ${isError ? 'error' : 'ok'}`;
    box.textContent = text;
  }

  // A button whose async work disables it meanwhile and reports a failure on the page.
  function button(label, props, work) {
    const btn = h('button', Object.assign({ type: 'button' }, props), label);
    btn.addEventListener('click', () => { run(btn, work); });
    return btn;
  }

  async function run(btn, work) {
    btn.disabled = true;
    try {
      await work();
    } catch (err) {
      if (!err.unauthorized) showMessage(err.message || String(err), true);
    } finally {
      btn.disabled = false;
    }
  }

  // Re-render the current page with a message on top (after a write changed what it shows).
  function reloadWith(text) {
    pendingFlash = { text };
    return route();
  }

  function splitOrder(order) {
    const i = order.lastIndexOf('.');
    return i < 0 ? [order, 'asc'] : [order.slice(0, i), order.slice(i + 1)];
  }

  // A header cell; with opts.order and column.sort it is a link toggling order=field.asc/desc in the URL.
  function headCell(col, order) {
    if (!col.sort || !order) return h('th', { scope: 'col', class: col.num ? 'num' : null }, col.label);
    const [field, dir] = splitOrder(order);
    const active = field === col.sort;
    const next = active && dir === 'asc' ? 'desc' : 'asc';
    return h('th', {
      scope: 'col',
      class: col.num ? 'num' : null,
      'aria-sort': active ? (dir === 'asc' ? 'ascending' : 'descending') : null,
    }, h('a', {
      href: hrefWith({ order: `${col.sort}.${next}`, offset: null }),
      class: active ? 'sort active' : 'sort',
      title: `Sort by ${col.label}, ${next === 'asc' ? 'ascending' : 'descending'}`,
    }, col.label, active ? (dir === 'asc' ? ' ▲' : ' ▼') : ''));
  }

  function bodyRows(columns, rows) {
    return rows.map((row) => h('tr', {},
      columns.map((c) => h('td', { class: c.num ? 'num' : c.cls || null }, c.cell(row)))));
  }

  // columns: [{ label, cell(row), num?, cls?, sort? }]
  function grid(columns, rows, opts = {}) {
    const table = h('table', { class: 'grid', id: opts.id || null },
      h('thead', {}, h('tr', {}, columns.map((c) => headCell(c, opts.order)))),
      h('tbody', {}, bodyRows(columns, rows || [])));
    return h('div', { class: 'table-wrap' }, table,
      rows && rows.length ? null : h('p', { class: 'empty muted' }, opts.empty || 'Nothing here.'));
  }

  function fields(pairs) {
    return h('dl', { class: 'fields' }, pairs.map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]));
  }

  function section(title, ...content) {
    return h('section', {}, h('h2', {}, title), ...content);
  }

  // Search inputs whose values go to the URL (and so to the API): [{ name, placeholder }].
  function filterForm(q, inputs) {
    const boxes = inputs.map((f) => h('input', {
      type: 'search', name: f.name, class: f.name, placeholder: f.placeholder, 'aria-label': f.placeholder,
      value: q.get(f.name) || '',
    }));
    const active = inputs.some((f) => q.get(f.name));
    return h('form', {
      class: 'filters', role: 'search',
      onsubmit: (event) => {
        event.preventDefault();
        const changes = { offset: null };
        for (const box of boxes) changes[box.name] = box.value.trim();
        navigate(hrefWith(changes));
      },
    }, boxes, h('button', { type: 'submit' }, 'Search'),
    active ? link(hrefWith(Object.fromEntries(inputs.map((f) => [f.name, null]).concat([['offset', null]]))), 'Clear') : null);
  }

  // "x–y of total" with Previous/Next buttons moving offset by limit.
  function pager(q, total, count) {
    const limit = limitOf(q);
    const offset = offsetOf(q);
    const totalN = Number(total) || 0;
    const range = count
      ? `${(offset + 1).toLocaleString()}–${(offset + count).toLocaleString()} of ${totalN.toLocaleString()}`
      : `0 of ${totalN.toLocaleString()}`;
    const go = (o) => navigate(hrefWith({ offset: o > 0 ? o : null }));
    return h('div', { class: 'pager' },
      h('button', { type: 'button', class: 'prev', disabled: offset <= 0, onclick: () => go(Math.max(0, offset - limit)) }, 'Previous'),
      h('span', { class: 'range' }, range),
      h('button', { type: 'button', class: 'next', disabled: offset + limit >= totalN, onclick: () => go(offset + limit) }, 'Next'));
  }

  // The common shape of a searchable, paged list page.
  async function listPage(ctx, { title, path, keys, filters, columns, intro, empty }) {
    const data = await api('GET', path + listParams(ctx.query, keys));
    const items = (data && data.items) || [];
    return [
      h('h1', {}, title),
      intro || null,
      filters ? filterForm(ctx.query, filters) : null,
      grid(columns, items, { empty }),
      pager(ctx.query, data && data.total != null ? data.total : items.length, items.length),
    ];
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Pages

  async function pageOverview() {
    const d = await api('GET', '/overview');
    const card = (label, n, href) => h('a', { class: 'card', href }, h('span', { class: 'card-num' }, num(n)),
      h('span', { class: 'card-label' }, label));
    return [
      h('h1', {}, 'Overview'),
      h('p', { class: 'muted' }, `Ferry ${d.version || '?'} · database ${d.database || '?'}`),
      h('div', { class: 'cards' },
        card('Users', d.users, '/console/users'),
        card('Spaces', d.spaces, '/console/spaces'),
        card('Devices', d.devices, '/console/devices'),
        card('Records', d.records, '/console/collections'),
        card('Open streams', d.streams, '/console/activity')),
      section('Records per collection', grid([
        { label: 'Collection', cell: (c) => link(paths.collection(c.name), c.name) },
        { label: 'Records', num: true, cell: (c) => num(c.records) },
      ], d.collections || [], { empty: 'No collections in the schema.' })),
    ];
  }

  const userColumns = [
    { label: 'E-mail', cell: (u) => link(paths.user(u.id), u.email || u.id) },
    { label: 'Created', cell: (u) => when(u.created_at) },
    { label: 'Last sign-in', cell: (u) => when(u.last_sign_in_at) },
    { label: 'Confirmed', cell: (u) => (u.email_confirmed_at ? when(u.email_confirmed_at) : 'no') },
    { label: 'Banned until', cell: (u) => (u.banned_until ? when(u.banned_until) : '') },
    { label: 'Providers', cell: (u) => (u.providers || []).join(', ') },
  ];

  function pageUsers(ctx) {
    return listPage(ctx, {
      title: 'Users', path: '/users', filters: [{ name: 'search', placeholder: 'Part of an e-mail' }],
      columns: userColumns, empty: 'No users match.',
    });
  }

  function deviceColumns(withUser, withRevoke) {
    return [
      withUser ? { label: 'User', cell: (d) => (d.user_id ? link(paths.user(d.user_id), d.email || d.user_id) : muted('—')) } : null,
      { label: 'Name', cell: (d) => value(d.name, 40) },
      { label: 'Type', cell: (d) => value(d.type, 20) },
      { label: 'Trust', cell: (d) => value(d.trust, 20) },
      { label: 'Last seen', cell: (d) => when(d.last_seen_at) },
      { label: 'Push', cell: (d) => (d.push ? ['yes ', muted(`(${d.push})`)] : 'no') },
      { label: 'Revoked', cell: (d) => (d.revoked_at ? when(d.revoked_at) : '') },
      withRevoke ? {
        label: '', cls: 'actions-cell',
        cell: (d) => (d.revoked_at ? null : button('Revoke', { class: 'revoke small danger' }, async () => {
          await api('POST', `/devices/${enc(d.id)}/revoke`);
          await reloadWith(`Device ${d.name || d.id} revoked; its sessions ended.`);
        })),
      } : null,
    ].filter(Boolean);
  }

  async function pageUser(ctx) {
    const id = ctx.params[0];
    const d = await api('GET', `/users/${enc(id)}`);
    const u = d.user || {};
    const who = u.email || id;
    ctx.title = who;
    const banned = u.banned_until && new Date(u.banned_until) > new Date();
    const actions = h('div', { class: 'actions' },
      button('Ban…', { id: 'ban' }, async () => {
        const answer = window.prompt(`Ban ${who} for how long? (a duration such as 24h or 720h)`, '24h');
        if (answer == null || !answer.trim()) return;
        await api('POST', `/users/${enc(id)}/ban`, { duration: answer.trim() });
        await reloadWith(`${who} is banned for ${answer.trim()}.`);
      }),
      button('Unban', { id: 'unban' }, async () => {
        await api('POST', `/users/${enc(id)}/ban`, { duration: 'none' });
        await reloadWith(`${who} is no longer banned.`);
      }),
      button('Sign out everywhere', { id: 'signout-user' }, async () => {
        await api('POST', `/users/${enc(id)}/sign-out`);
        await reloadWith(`Every session of ${who} has ended.`);
      }),
      h('a', { class: 'button', href: `${API}/users/${enc(id)}/export`, download: '' }, 'Export'),
      button('Delete user', { id: 'delete-user', class: 'danger' }, async () => {
        if (!window.confirm(`Delete ${who} and all of their data? This cannot be undone.`)) return;
        await api('DELETE', `/users/${enc(id)}`);
        pendingFlash = { text: `${who} was deleted.` };
        await navigate('/console/users');
      }));
    return [
      h('p', { class: 'crumbs' }, link('/console/users', 'Users'), ' / '),
      h('h1', {}, who, banned ? badge('banned', 'bad') : null),
      actions,
      fields([
        ['ID', h('code', {}, u.id || id)],
        ['E-mail', u.email || muted('—')],
        ['Created', when(u.created_at)],
        ['Last sign-in', when(u.last_sign_in_at)],
        ['E-mail confirmed', u.email_confirmed_at ? when(u.email_confirmed_at) : 'no'],
        ['Banned until', u.banned_until ? when(u.banned_until) : 'not banned'],
        ['Providers', (u.providers || []).join(', ') || muted('—')],
      ]),
      section('Sessions', grid([
        { label: 'Session', cls: 'mono', cell: (s) => value(s.id, 40) },
        { label: 'Created', cell: (s) => when(s.created_at) },
        { label: 'Refreshed', cell: (s) => when(s.refreshed_at) },
        { label: 'Device', cls: 'mono', cell: (s) => (s.device_id ? value(s.device_id, 40) : muted('—')) },
      ], d.sessions || [], { empty: 'No sessions.' })),
      section('Devices', grid(deviceColumns(false, false), d.devices || [], { empty: 'No devices.' })),
      section('Spaces', grid([
        { label: 'Space', cell: (s) => link(paths.space(s.id), s.name || s.id) },
        { label: 'Role', cell: (s) => value(s.role, 20) },
        { label: 'Encrypted', cell: (s) => yesno(s.encrypted) },
        { label: 'Personal', cell: (s) => yesno(s.personal) },
      ], d.spaces || [], { empty: 'Not a member of any space.' })),
    ];
  }

  function pageSpaces(ctx) {
    return listPage(ctx, {
      title: 'Spaces', path: '/spaces', filters: [{ name: 'search', placeholder: 'Search spaces' }],
      empty: 'No spaces match.',
      columns: [
        { label: 'Name', cell: (s) => link(paths.space(s.id), s.name || s.id) },
        { label: 'Members', num: true, cell: (s) => num(s.members) },
        { label: 'Encrypted', cell: (s) => yesno(s.encrypted) },
        { label: 'Personal', cell: (s) => yesno(s.personal) },
        { label: 'Seq', num: true, cell: (s) => num(s.seq) },
        { label: 'Created', cell: (s) => when(s.created_at) },
        { label: 'Changed', cell: (s) => when(s.changed_at) },
      ],
    });
  }

  async function pageSpace(ctx) {
    const id = ctx.params[0];
    const d = await api('GET', `/spaces/${enc(id)}`);
    const sp = d.space || {};
    ctx.title = sp.name || id;
    return [
      h('p', { class: 'crumbs' }, link('/console/spaces', 'Spaces'), ' / '),
      h('h1', {}, sp.name || id, sp.encrypted ? badge('encrypted') : null, sp.personal ? badge('personal') : null),
      fields([
        ['ID', h('code', {}, sp.id || id)],
        ['Members', num(sp.members)],
        ['Seq', num(sp.seq)],
        ['Created', when(sp.created_at)],
        ['Changed', when(sp.changed_at)],
      ]),
      section('Members', grid([
        { label: 'User', cell: (m) => (m.user_id ? link(paths.user(m.user_id), m.email || m.user_id) : value(m.email)) },
        { label: 'Role', cell: (m) => value(m.role, 20) },
      ], d.members || [], { empty: 'No members.' })),
      section('Invitations', grid([
        { label: 'E-mail', cell: (i) => value(i.email) },
        { label: 'Role', cell: (i) => value(i.role, 20) },
        { label: 'Created', cell: (i) => when(i.created_at) },
        { label: 'Expires', cell: (i) => when(i.expires_at) },
      ], d.invitations || [], { empty: 'No open invitations.' })),
      section('Records', grid([
        { label: 'Collection', cell: (r) => link(`${paths.collection(r.collection)}?space=${enc(id)}`, r.collection) },
        { label: 'Records', num: true, cell: (r) => num(r.records) },
        { label: 'Deleted', num: true, cell: (r) => num(r.deleted) },
      ], d.records || [], { empty: 'No records in this space.' })),
    ];
  }

  async function pageCollections() {
    const d = await api('GET', '/collections');
    return [
      h('h1', {}, 'Collections'),
      grid([
        { label: 'Collection', cell: (c) => link(paths.collection(c.name), c.name) },
        { label: 'Records', num: true, cell: (c) => num(c.records) },
        { label: 'Deleted', num: true, cell: (c) => num(c.deleted) },
        { label: 'Fields', cell: (c) => value((c.fields || []).map((f) => f.name).join(', '), 60) },
        { label: 'Parent', cell: (c) => (c.parent ? link(paths.collection(c.parent), c.parent) : '') },
        { label: 'Encrypted', cell: (c) => yesno(c.encrypted) },
      ], (d && d.items) || [], { empty: 'The schema has no collections.' }),
    ];
  }

  const META_FIELDS = ['id', '_space', '_seq'];
  const MAX_FIELD_COLUMNS = 6; // id + 6 fields + _space: 8 columns fit a laptop screen (newest first unless sorted)

  async function pageCollection(ctx) {
    const name = ctx.params[0];
    const q = ctx.query;
    ctx.title = name;
    const [schema, data] = await Promise.all([
      api('GET', '/collections'),
      api('GET', `/collections/${enc(name)}${listParams(q, ['search', 'space', 'order'])}`),
    ]);
    const info = ((schema && schema.items) || []).find((c) => c.name === name);
    const items = (data && data.items) || [];
    // The schema's field order when known, otherwise whatever the first record has.
    const all = (info ? (info.fields || []).map((f) => f.name) : Object.keys(items[0] || {}))
      .filter((f) => !META_FIELDS.includes(f));
    const shown = all.slice(0, MAX_FIELD_COLUMNS);
    const columns = [
      { label: 'id', sort: 'id', cls: 'mono', cell: (r) => link(paths.record(name, r.id), value(r.id, 40)) },
      ...shown.map((f) => ({ label: f, sort: f, cell: (r) => value(r[f], 100) })),
      { label: '_space', sort: '_space', cls: 'mono', cell: (r) => (r._space ? link(paths.space(r._space), value(r._space, 24)) : muted('—')) },
    ];
    return [
      h('p', { class: 'crumbs' }, link('/console/collections', 'Collections'), ' / '),
      h('h1', {}, name, info && info.encrypted ? badge('encrypted') : null),
      info ? h('p', { class: 'muted' },
        `${all.length} field${all.length === 1 ? '' : 's'}`,
        info.parent ? [' · child of ', link(paths.collection(info.parent), info.parent)] : null,
        all.length > shown.length ? ` · ${all.length - shown.length} more shown on each record's page` : null) : null,
      filterForm(q, [{ name: 'search', placeholder: 'Text in any field' }, { name: 'space', placeholder: 'Space ID' }]),
      grid(columns, items, { order: q.get('order') || '_updated_at.desc', empty: 'No records match.' }),
      pager(q, data && data.total != null ? data.total : items.length, items.length),
    ];
  }

  async function pageRecord(ctx) {
    const [name, id] = ctx.params;
    ctx.title = `${name} ${id}`;
    const d = await api('GET', `/collections/${enc(name)}/${enc(id)}`);
    const rec = d.record || {};
    const clocks = d.clocks || {};
    const rows = Object.keys(rec).map((k) => ({ field: k, value: rec[k], clock: clocks[k] }));
    const children = (d.children || []).map((group) => {
      const items = group.items || [];
      const keys = Object.keys(items[0] || {}).filter((k) => k !== 'id' && k !== '_space').slice(0, 4);
      return h('section', { class: 'child' },
        h('h3', {}, link(paths.collection(group.collection), group.collection), ' ',
          muted(group.field ? `by ${group.field} (${items.length})` : `(${items.length})`)),
        grid([
          { label: 'id', cls: 'mono', cell: (r) => link(paths.record(group.collection, r.id), value(r.id, 40)) },
          ...keys.map((k) => ({ label: k, cell: (r) => value(r[k], 50) })),
        ], items));
    });
    return [
      h('p', { class: 'crumbs' }, link('/console/collections', 'Collections'), ' / ',
        link(paths.collection(name), name), ' / '),
      h('h1', { class: 'mono' }, id, d.deleted ? badge('deleted', 'bad') : null),
      fields([
        ['Collection', link(paths.collection(name), name)],
        ['Space', d.space ? link(paths.space(d.space), d.space) : muted('—')],
        ['Seq', num(d.seq)],
        ['Deleted', yesno(d.deleted)],
      ]),
      section('Fields', grid([
        { label: 'Field', cls: 'key', cell: (r) => r.field },
        { label: 'Value', cls: 'value', cell: (r) => fullValue(r.value) },
        { label: 'Clock', cls: 'mono', cell: (r) => (r.clock == null ? muted('—') : value(r.clock, 60)) },
      ], rows)),
      section('Children', children.length ? children : h('p', { class: 'muted' }, 'No child records.')),
    ];
  }

  function pageDevices(ctx) {
    return listPage(ctx, {
      title: 'Devices', path: '/devices', filters: [{ name: 'search', placeholder: 'Search devices' }],
      columns: deviceColumns(true, true), empty: 'No devices match.',
    });
  }

  // --- activity: hand-drawn SVG line charts ---

  const SERIES = [
    { group: 'Requests', label: '2xx responses', cls: 's-ok', get: (x) => x.requests && x.requests['2xx'] },
    { group: 'Requests', label: '4xx responses', cls: 's-warn', get: (x) => x.requests && x.requests['4xx'] },
    { group: 'Requests', label: '5xx responses', cls: 's-bad', get: (x) => x.requests && x.requests['5xx'] },
    { group: 'Sync', label: 'Pushes', get: (x) => x.pushes },
    { group: 'Sync', label: 'Pulls', get: (x) => x.pulls },
    { group: 'Sync', label: 'Conflicts', cls: 's-warn', get: (x) => x.conflicts },
    { group: 'Sync', label: 'Refused', cls: 's-bad', get: (x) => x.refused },
    { group: 'Sync', label: 'Open streams', get: (x) => x.streams },
    { group: 'Latency', label: 'p50', unit: ' ms', get: (x) => x.latency_ms && x.latency_ms.p50 },
    { group: 'Latency', label: 'p95', unit: ' ms', cls: 's-warn', get: (x) => x.latency_ms && x.latency_ms.p95 },
    { group: 'Latency', label: 'p99', unit: ' ms', cls: 's-bad', get: (x) => x.latency_ms && x.latency_ms.p99 },
  ];

  // Plot coordinates: the inner <svg> stretches a 1000×100 viewBox over the chart's width (preserveAspectRatio
  // none, non-scaling strokes), while the labels sit in the outer one in pixels so the text is never distorted.
  const PLOT_W = 1000;
  const PLOT_H = 100;

  function setLabel(el, text, iso) {
    el.textContent = text;
    if (iso) el.appendChild(svg('title', {}, iso)); // SVG shows <title> on hover, not a title attribute
  }

  function makeChart(spec) {
    const line = svg('path', { class: 'series', d: `M0 ${PLOT_H} L${PLOT_W} ${PLOT_H}`, 'vector-effect': 'non-scaling-stroke' });
    const area = svg('path', { class: 'area', d: '' });
    const max = svg('text', { class: 'axis', x: 4, y: 11 });
    const min = svg('text', { class: 'axis', x: 4, y: 118 });
    const start = svg('text', { class: 'axis', x: 4, y: 135 });
    const end = svg('text', { class: 'axis', x: '100%', dx: -4, y: 135, 'text-anchor': 'end' });
    const now = h('span', { class: 'now' });
    const figure = h('figure', { class: `chart-box ${spec.cls || ''}` },
      h('figcaption', {}, h('span', {}, spec.label), now),
      svg('svg', { class: 'chart', role: 'img', 'aria-label': spec.label },
        svg('svg', {
          class: 'plot', x: 0, y: 16, width: '100%', height: 90, overflow: 'visible',
          viewBox: `0 0 ${PLOT_W} ${PLOT_H}`, preserveAspectRatio: 'none',
        },
        svg('line', { class: 'gridline', x1: 0, y1: 0, x2: PLOT_W, y2: 0, 'vector-effect': 'non-scaling-stroke' }),
        svg('line', { class: 'gridline', x1: 0, y1: PLOT_H, x2: PLOT_W, y2: PLOT_H, 'vector-effect': 'non-scaling-stroke' }),
        area, line),
        max, min, start, end));
    const fmt = (v) => `${Math.round(v * 10) / 10}${spec.unit || ''}`;

    function update(samples) {
      const vals = samples.map((x) => Number(spec.get(x)) || 0);
      // The axis starts at 0 so a burst reads as one; an all-zero series is a flat line along the bottom.
      const lo = Math.min(0, ...vals);
      const hi = Math.max(0, ...vals);
      const span = hi - lo || 1;
      const y = (v) => (PLOT_H - ((v - lo) / span) * PLOT_H).toFixed(1);
      const pts = vals.length > 1
        ? vals.map((v, i) => [((i / (vals.length - 1)) * PLOT_W).toFixed(1), y(v)])
        : [[0, y(vals[0] || 0)], [PLOT_W, y(vals[0] || 0)]];
      const d = pts.map(([px, py], i) => `${i ? 'L' : 'M'}${px} ${py}`).join(' ');
      line.setAttribute('d', d);
      area.setAttribute('d', `${d} L${PLOT_W} ${PLOT_H} L0 ${PLOT_H} Z`);
      setLabel(max, fmt(hi));
      setLabel(min, fmt(lo));
      const first = samples[0];
      const last = samples[samples.length - 1];
      const time = (s) => (s && s.at ? new Date(s.at).toLocaleTimeString() : '—');
      setLabel(start, time(first), first && first.at);
      setLabel(end, time(last), last && last.at);
      now.textContent = vals.length ? fmt(vals[vals.length - 1]) : '—';
      now.title = vals.length ? `min ${fmt(Math.min(...vals))} · max ${fmt(Math.max(...vals))}` : '';
    }
    return { figure, update };
  }

  const ERROR_COLUMNS = [
    { label: 'Time', cell: (e) => when(e.at) },
    { label: 'Method', cls: 'mono', cell: (e) => value(e.method, 10) },
    { label: 'Path', cls: 'mono', cell: (e) => value(e.path, 60) },
    { label: 'Status', num: true, cell: (e) => value(e.status, 5) },
    { label: 'Code', cls: 'mono', cell: (e) => value(e.error_code, 40) },
    { label: 'Message', cell: (e) => value(e.message, 120) },
  ];

  async function pageActivity(ctx) {
    const first = await api('GET', '/activity');
    const charts = SERIES.map((spec) => Object.assign(makeChart(spec), { group: spec.group }));
    const groups = [...new Set(SERIES.map((spec) => spec.group))];
    const byRoute = h('p', { class: 'muted by-route' });
    const status = h('p', { class: 'refresh muted' });
    // The errors table stays the same element across refreshes; only its rows change.
    const errorsBody = h('tbody');
    const noErrors = h('p', { class: 'empty muted' }, 'No recent errors.');
    const errorsTable = h('table', { class: 'grid', id: 'errors' },
      h('thead', {}, h('tr', {}, ERROR_COLUMNS.map((c) => headCell(c)))), errorsBody);

    function paint(d) {
      const samples = Array.isArray(d && d.samples) ? d.samples : [];
      for (const c of charts) c.update(samples);
      const last = samples[samples.length - 1];
      const routesNow = last && last.by_route;
      byRoute.textContent = routesNow
        ? `Last interval by route: ${Object.entries(routesNow).map(([k, v]) => `${k} ${Number(v) || 0}`).join(' · ')}`
        : '';
      const errors = ((d && d.errors) || []).slice()
        .sort((a, b) => (Date.parse(b.at) || 0) - (Date.parse(a.at) || 0)); // newest first
      errorsBody.replaceChildren(...bodyRows(ERROR_COLUMNS, errors));
      noErrors.hidden = errors.length > 0;
      status.className = 'refresh muted';
      status.textContent = `Counts per ${(d && d.interval) || '?'} s interval · updated ${new Date().toLocaleTimeString()}, every 5 s`;
    }
    paint(first);

    let busy = false; // a slow answer must not pile up requests
    ctx.every(async () => {
      if (busy || document.hidden) return;
      busy = true;
      try {
        const d = await api('GET', '/activity');
        if (!ctx.stale()) paint(d);
      } catch (err) {
        if (!err.unauthorized && !ctx.stale()) {
          status.className = 'refresh error';
          status.textContent = `Refresh failed: ${err.message}`;
        }
      } finally {
        busy = false;
      }
    }, ACTIVITY_REFRESH_MS);

    return [
      h('h1', {}, 'Activity'),
      status,
      groups.map((g) => h('section', {}, h('h2', {}, g),
        g === 'Requests' ? byRoute : null,
        h('div', { class: 'charts' }, charts.filter((c) => c.group === g).map((c) => c.figure)))),
      section('Recent errors', h('div', { class: 'table-wrap' }, errorsTable), noErrors),
    ];
  }

  async function pageStorage() {
    const d = await api('GET', '/storage');
    const blobs = d.blobs || {};
    return [
      h('h1', {}, 'Storage'),
      h('div', { class: 'cards' },
        h('div', { class: 'card' }, h('span', { class: 'card-num' }, num(blobs.count)), h('span', { class: 'card-label' }, 'Sync blobs')),
        h('div', { class: 'card' }, h('span', { class: 'card-num' }, bytes(blobs.bytes)), h('span', { class: 'card-label' }, 'Blob bytes'))),
      section('Buckets', grid([
        { label: 'Bucket', cell: (b) => link(paths.bucket(b.id), b.id) },
        { label: 'Public', cell: (b) => yesno(b.public) },
        { label: 'Objects', num: true, cell: (b) => num(b.objects) },
        { label: 'Size', num: true, cell: (b) => bytes(b.bytes) },
      ], d.buckets || [], { empty: 'No buckets.' })),
    ];
  }

  function pageBucket(ctx) {
    const id = ctx.params[0];
    ctx.title = `Bucket ${id}`;
    return listPage(ctx, {
      title: `Bucket ${id}`, path: `/storage/buckets/${enc(id)}`,
      intro: h('p', { class: 'crumbs' }, link('/console/storage', 'Storage'), ' / '),
      filters: [{ name: 'search', placeholder: 'Part of a name' }], empty: 'No objects match.',
      columns: [
        { label: 'Name', cls: 'mono', cell: (o) => value(o.name, 80) },
        { label: 'Size', num: true, cell: (o) => bytes(o.size) },
        { label: 'Type', cell: (o) => value(o.content_type, 40) },
        { label: 'Created', cell: (o) => when(o.created_at) },
      ],
    });
  }

  // Nested keys become dotted ones; arrays of plain values stay one row.
  function flatten(obj, prefix, out) {
    for (const [k, v] of Object.entries(obj)) {
      const key = prefix ? `${prefix}.${k}` : k;
      const nested = v && typeof v === 'object';
      if (nested && !Array.isArray(v) && Object.keys(v).length) flatten(v, key, out);
      else if (Array.isArray(v) && v.some((x) => x && typeof x === 'object')) flatten(Object.assign({}, v), key, out);
      else out.push([key, v]);
    }
    return out;
  }

  async function pageSettings() {
    const d = await api('GET', '/settings');
    const rows = flatten(d && typeof d === 'object' ? d : { value: d }, '', []);
    return [
      h('h1', {}, 'Settings'),
      h('p', { class: 'muted' }, 'The configuration in force. Secrets are never shown.'),
      grid([
        { label: 'Key', cls: 'key mono', cell: ([k]) => k },
        { label: 'Value', cls: 'value', cell: ([, v]) => (Array.isArray(v) ? v.join(', ') || muted('[]') : fullValue(v)) },
      ], rows),
    ];
  }

  async function pageBackups(ctx) {
    const list = h('div');
    // The list may fail (PostgreSQL has no backups here) while the button must still be there to try.
    async function load() {
      try {
        const d = await api('GET', `/backups${listParams(ctx.query, [])}`);
        const items = (d && d.items) || [];
        list.replaceChildren(grid([
          { label: 'Backup', cls: 'mono', cell: (b) => value(b.name) },
          { label: 'Created', cell: (b) => when(b.created_at) },
          { label: 'Size', num: true, cell: (b) => bytes(b.bytes) },
          { label: 'Blobs', num: true, cell: (b) => num(b.blobs) },
          { label: 'Scheduled', cell: (b) => yesno(b.scheduled) },
        ], items, { empty: 'No backups yet.' }), pager(ctx.query, d && d.total != null ? d.total : items.length, items.length));
      } catch (err) {
        if (err.unauthorized) throw err;
        list.replaceChildren(h('p', { class: 'error' }, err.message));
      }
    }
    await load();
    const now = button('Back up now', { id: 'backup-now', class: 'primary' }, async () => {
      const item = await api('POST', '/backups');
      showMessage(`Backup ${(item && item.name) || ''} created.`, false);
      await load();
    });
    return [
      h('h1', {}, 'Backups'),
      h('p', { class: 'muted' }, 'Backups of the embedded database, as ferry backup create takes them.'),
      h('div', { class: 'actions' }, now),
      list,
    ];
  }

  function pageLog(ctx) {
    const who = (o) => (o && typeof o === 'object' ? o.email || o.id : o);
    return listPage(ctx, {
      title: 'Operator log', path: '/log', keys: [], empty: 'Nothing logged yet.',
      columns: [
        { label: 'Time', cell: (e) => when(e.at) },
        { label: 'Operator', cell: (e) => value(who(e.operator), 60) },
        { label: 'Action', cell: (e) => value(e.action, 40) },
        { label: 'Target', cls: 'mono', cell: (e) => value(e.target, 80) },
      ],
    });
  }

  async function pageNotFound() {
    return [
      h('h1', {}, 'Not found'),
      h('p', {}, 'There is no console page at ', h('code', {}, location.pathname), '.'),
      h('p', {}, link('/console', 'Back to the overview')),
    ];
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Start

  async function boot() {
    els = {
      page: document.getElementById('page'),
      nav: document.getElementById('nav'),
      session: document.getElementById('session'),
      operator: document.getElementById('operator'),
      signinView: document.getElementById('signin-view'),
      signinForm: document.getElementById('signin'),
      signinEmail: document.getElementById('signin-email'),
      signinPassword: document.getElementById('signin-password'),
      signinSubmit: document.getElementById('signin-submit'),
      signinError: document.getElementById('signin-error'),
      signinNote: document.getElementById('signin-note'),
    };
    els.signinForm.addEventListener('submit', (event) => { onSignin(event); });
    document.addEventListener('click', onDocumentClick);
    window.addEventListener('popstate', () => { route(); });
    // Last resort: a rejection nobody caught is shown on the page instead of the browser console.
    window.addEventListener('unhandledrejection', (event) => {
      event.preventDefault();
      const reason = event.reason;
      if (els.page && !els.page.hidden) showMessage((reason && reason.message) || String(reason), true);
    });

    try {
      setSession(await api('GET', '/session', null, { auth: false }));
    } catch (err) {
      showSignin(err.unauthorized ? '' : err.message);
      return;
    }
    showApp();
    await route();
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', () => { boot(); });
  else boot();
})();
