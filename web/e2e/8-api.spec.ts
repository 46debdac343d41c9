/**
 * 13. A type whose name holds an acronym, on examples/schemas/api.toml: a
 * catalogue has services, services have `APIEndpoint`s with a field for each
 * control (a select, a number, a checkbox, a date, an address, a long text).
 * The app and the kit take the body key (`apiEndpoint`), the parent key
 * (`serviceId`) and the nest key (`apiEndpoints`) from `GET /schema`: Bob
 * edits an endpoint as one form and saves it with one PATCH, adds one
 * through the create form, and moves one to another service; Carol sees
 * each change at once.
 */
import { Api, DEMO, DEMO_CASE, artifactName, expect, openCase, shot, signIn, test } from './support';

const WITHIN_1S = { timeout: 1_000 };

interface Catalogue {
  services: { id: number; name: string; apiEndpoints: { id: number; path: string }[] }[];
}

test('13. APIEndpoint: every control in one form, one PATCH under the server’s body key, a create form, a move to another service', async ({
  browser,
  server,
}) => {
  const api = await Api.login(server.apiUrl, DEMO.alice);
  const catalogue = await api.call<Catalogue>('GET', `/cases/${DEMO_CASE}`);
  const [orders, tides] = catalogue.services;
  const endpoint = orders!.apiEndpoints.find((e) => e.path === '/v0/orders/export')!;

  const bob = await signIn(browser, server, DEMO.bob);
  const carol = await signIn(browser, server, DEMO.carol);
  for (const who of [bob, carol]) {
    await who.page.setViewportSize({ width: 900, height: 1400 });
    await openCase(who.page, server, DEMO_CASE);
  }
  const patches: unknown[] = [];
  bob.page.on('request', (r) => {
    if (r.method() === 'PATCH') patches.push(r.postDataJSON());
  });

  // headed by its label (the path); each field with its control
  const bobForm = bob.page.getByTestId(`field-APIEndpoint-${endpoint.id}`);
  const carolForm = carol.page.getByTestId(`field-APIEndpoint-${endpoint.id}`);
  await expect(bobForm.getByTestId('record-title')).toHaveText('/v0/orders/export');
  await expect(bobForm.getByRole('combobox', { name: '/v0/orders/export method' })).toHaveValue('GET');
  await expect(bobForm.getByRole('spinbutton', { name: '/v0/orders/export requests per minute' })).toHaveValue('10');
  await expect(bobForm.getByRole('checkbox', { name: '/v0/orders/export public' })).not.toBeChecked();
  await expect(bobForm.getByTestId(`field-APIEndpoint-${endpoint.id}-sunsetOn`).getByTestId('field-input')).toHaveAttribute('type', 'date');
  await expect(bobForm.getByTestId(`field-APIEndpoint-${endpoint.id}-docs`).getByTestId('field-input')).toHaveAttribute('type', 'url');
  await expect(bobForm.getByRole('textbox', { name: '/v0/orders/export notes' })).toBeVisible();

  // one Edit opens them all; one Save sends one PATCH with the changes, nested under `apiEndpoint`
  await bobForm.getByRole('button', { name: 'Edit /v0/orders/export' }).click();
  await expect(carolForm.getByTestId('lock-badge')).toHaveText(/Bob is editing/, WITHIN_1S);
  await bobForm.getByRole('combobox', { name: '/v0/orders/export method' }).selectOption('POST');
  await bobForm.getByRole('spinbutton', { name: '/v0/orders/export requests per minute' }).fill('60');
  await bobForm.getByRole('checkbox', { name: '/v0/orders/export public' }).check();
  await bobForm.getByTestId(`field-APIEndpoint-${endpoint.id}-sunsetOn`).getByTestId('field-input').fill('2027-01-31');
  await bobForm.getByTestId(`field-APIEndpoint-${endpoint.id}-docs`).getByTestId('field-input').fill('https://example.com/docs/export');
  await bobForm.getByRole('textbox', { name: '/v0/orders/export notes' }).fill('Replaced by /v1/orders.');
  await shot(bob.page, artifactName(server, '13-bob-edits-an-endpoint'));
  await bobForm.getByRole('button', { name: 'Save /v0/orders/export' }).click();
  await expect(carolForm.getByRole('combobox', { name: '/v0/orders/export method' })).toHaveValue('POST', WITHIN_1S);
  await expect(carolForm.getByRole('spinbutton', { name: '/v0/orders/export requests per minute' })).toHaveValue('60');
  await expect(carolForm.getByRole('checkbox', { name: '/v0/orders/export public' })).toBeChecked();
  await expect(carolForm.getByTestId('field-link')).toHaveAttribute('href', 'https://example.com/docs/export');
  await expect(carolForm.getByTestId('lock-badge')).toHaveCount(0, WITHIN_1S);
  expect(patches).toEqual([
    {
      apiEndpoint: {
        method: 'POST',
        rateLimit: 60,
        public: true,
        sunsetOn: '2027-01-31',
        docs: 'https://example.com/docs/export',
        notes: 'Replaced by /v1/orders.',
      },
    },
  ]);

  // the create form: defaults filled in, the path required
  const tidesSection = bob.page.getByTestId(`service-${tides!.id}`);
  await tidesSection.getByRole('button', { name: 'Add API endpoint' }).click();
  const form = bob.page.getByTestId('create-APIEndpoint');
  await expect(form.getByRole('combobox', { name: 'Method' })).toHaveValue('GET');
  await expect(form.getByRole('spinbutton', { name: 'Requests per minute' })).toHaveValue('600');
  await expect(form.getByRole('checkbox', { name: 'Public' })).not.toBeChecked();
  await expect(form.getByRole('textbox', { name: /Path.*required/ })).toHaveValue('');
  await form.getByRole('textbox', { name: /Path/ }).fill('/v1/tides/tomorrow');
  await form.getByRole('button', { name: 'Save' }).click();
  await expect(carol.page.getByTestId(`service-${tides!.id}`).getByRole('heading', { name: '/v1/tides/tomorrow' })).toBeVisible(WITHIN_1S);

  // a move to another service sends `serviceId`, the parent key the schema gives
  await bobForm.scrollIntoViewIfNeeded();
  await bob.page.getByRole('combobox', { name: 'Service to move /v0/orders/export to' }).selectOption({ label: 'Tides' });
  await bob.page.getByRole('button', { name: 'Move /v0/orders/export to the chosen service' }).click();
  await expect(carol.page.getByTestId(`service-${tides!.id}`).getByTestId(`field-APIEndpoint-${endpoint.id}`)).toBeVisible(WITHIN_1S);
  expect(patches.at(-1)).toMatchObject({ apiEndpoint: { serviceId: tides!.id } });

  await bob.context.close();
  await carol.context.close();
});
