// Black-box: HorizontalPodAutoscaler (autoscaling/v2) validation as upstream's validateHorizontalPodAutoscalerSpec.
import t from 'tap'
import { startServer, type TestServer } from '../helpers/server.js'
import { expectRefused } from '../helpers/refused.js'

let s: TestServer
const HPA = '/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers'
const K = 'HorizontalPodAutoscaler.autoscaling'

t.before(async () => { s = await startServer() })
t.teardown(async () => { await s?.stop() })

type Obj = Record<string, any>
const ref = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }
const cpu = (target: Obj = { type: 'Utilization', averageUtilization: 70 }) => ({ type: 'Resource', resource: { name: 'cpu', target } })
const hpa = (name: string, spec: Obj) => ({ apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: { name }, spec: { scaleTargetRef: ref, minReplicas: 2, maxReplicas: 10, metrics: [cpu()], ...spec } })

t.test('an HPA on a Deployment with cpu utilization, and one with behavior and external metrics, are created', async (t) => {
  let r = await s.request('POST', HPA, hpa('web', {}))
  t.equal(r.status, 201, r.text)
  r = await s.request('POST', HPA, hpa('queue', {
    metrics: [{ type: 'External', external: { metric: { name: 'queue_depth' }, target: { type: 'AverageValue', averageValue: '30' } } }],
    behavior: { scaleDown: { stabilizationWindowSeconds: 120, policies: [{ type: 'Pods', value: 1, periodSeconds: 60 }] } },
  }))
  t.equal(r.status, 201, r.text)
})

t.test('replica bounds', async (t) => {
  await expectRefused(t, s, HPA, hpa('min0', { minReplicas: 0 }), K, [
    { field: 'spec.minReplicas', reason: 'FieldValueInvalid', message: 'Invalid value: 0: must be greater than or equal to 1' },
    { field: 'spec.metrics', reason: 'FieldValueForbidden', message: 'Forbidden: must specify at least one Object or External metric to support scaling to zero replicas' },
  ])
  await expectRefused(t, s, HPA, hpa('max-lt-min', { minReplicas: 5, maxReplicas: 3 }), K, [{ field: 'spec.maxReplicas', reason: 'FieldValueInvalid', message: 'Invalid value: 3: must be greater than or equal to `minReplicas`' }])
  const noMax = hpa('no-max', { minReplicas: undefined })
  delete (noMax.spec as any).maxReplicas
  delete (noMax.spec as any).minReplicas
  await expectRefused(t, s, HPA, noMax, K, [
    { field: 'spec.maxReplicas', reason: 'FieldValueInvalid', message: 'Invalid value: 0: must be greater than 0' },
    { field: 'spec.maxReplicas', reason: 'FieldValueInvalid', message: 'Invalid value: 0: must be greater than or equal to `minReplicas`' },
  ])
})

t.test('scaleTargetRef', async (t) => {
  await expectRefused(t, s, HPA, hpa('no-ref', { scaleTargetRef: { apiVersion: 'apps/v1' } }), K, [
    { field: 'spec.scaleTargetRef.kind', reason: 'FieldValueRequired', message: 'Required value' },
    { field: 'spec.scaleTargetRef.name', reason: 'FieldValueRequired', message: 'Required value' },
  ])
  await expectRefused(t, s, HPA, hpa('slash', { scaleTargetRef: { kind: 'Deployment', name: 'a/b' } }), K, [{ field: 'spec.scaleTargetRef.name', reason: 'FieldValueInvalid', message: 'Invalid value: "a/b": may not contain \'/\'' }])
})

t.test('metrics', async (t) => {
  await expectRefused(t, s, HPA, hpa('no-target', { metrics: [cpu({ type: 'Utilization' })] }), K, [
    { field: 'spec.metrics[0].resource.target.averageUtilization', reason: 'FieldValueRequired', message: 'Required value: must set either a target raw value or a target utilization' },
  ])
  await expectRefused(t, s, HPA, hpa('bad-target', { metrics: [cpu({ type: 'Percent', averageUtilization: 0 })] }), K, [
    { field: 'spec.metrics[0].resource.target.type', reason: 'FieldValueInvalid', message: 'Invalid value: "Percent": must be either Utilization, Value, or AverageValue' },
    { field: 'spec.metrics[0].resource.target.averageUtilization', reason: 'FieldValueInvalid', message: 'Invalid value: 0: must be greater than 0' },
  ])
  await expectRefused(t, s, HPA, hpa('wrong-source', { metrics: [{ type: 'Pods', resource: cpu().resource }] }), K, [
    { field: 'spec.metrics[0].pods', reason: 'FieldValueRequired', message: 'Required value: must populate information for the given metric source' },
  ])
  await expectRefused(t, s, HPA, hpa('bad-type', { metrics: [{ type: 'Memory', resource: cpu().resource }] }), K, [
    { field: 'spec.metrics[0].type', reason: 'FieldValueNotSupported', message: 'Unsupported value: "Memory": supported values: "ContainerResource", "External", "Object", "Pods", "Resource"' },
    { field: 'spec.metrics[0].type', reason: 'FieldValueNotSupported', message: 'Unsupported value: "Memory": supported values: "ContainerResource", "External", "Object", "Pods", "Resource"' },
  ])
  await expectRefused(t, s, HPA, hpa('two-sources', { metrics: [{ ...cpu(), pods: { metric: { name: 'qps' }, target: { type: 'AverageValue', averageValue: '10' } } }] }), K, [
    { field: 'spec.metrics[0].pods', reason: 'FieldValueForbidden', message: 'Forbidden: must populate the given metric source only' },
  ])
  await expectRefused(t, s, HPA, hpa('neg-value', { metrics: [{ type: 'Pods', pods: { metric: { name: 'qps' }, target: { type: 'AverageValue', averageValue: '-1' } } }] }), K, [
    { field: 'spec.metrics[0].pods.target.averageValue', reason: 'FieldValueInvalid', message: 'Invalid value: -1: must be positive' },
  ])
})

t.test('behavior policies', async (t) => {
  await expectRefused(t, s, HPA, hpa('behave', { behavior: { scaleUp: { stabilizationWindowSeconds: 4000, selectPolicy: 'Avg', policies: [{ type: 'Nodes', value: 0, periodSeconds: 2000 }] } } }), K, [
    { field: 'spec.behavior.scaleUp.stabilizationWindowSeconds', reason: 'FieldValueInvalid', message: 'Invalid value: 4000: must be less than or equal to 3600' },
    { field: 'spec.behavior.scaleUp.selectPolicy', reason: 'FieldValueNotSupported', message: 'Unsupported value: "Avg": supported values: "Disabled", "Max", "Min"' },
    { field: 'spec.behavior.scaleUp.policies[0].type', reason: 'FieldValueNotSupported', message: 'Unsupported value: "Nodes": supported values: "Percent", "Pods"' },
    { field: 'spec.behavior.scaleUp.policies[0].value', reason: 'FieldValueInvalid', message: 'Invalid value: 0: must be greater than zero' },
    { field: 'spec.behavior.scaleUp.policies[0].periodSeconds', reason: 'FieldValueInvalid', message: 'Invalid value: 2000: must be less than or equal to 1800' },
  ])
  await expectRefused(t, s, HPA, hpa('no-policies', { behavior: { scaleDown: { policies: [] } } }), K, [
    { field: 'spec.behavior.scaleDown.policies', reason: 'FieldValueRequired', message: 'Required value: must specify at least one Policy' },
  ])
})

t.test('updates are validated', async (t) => {
  const r = await s.request('PATCH', `${HPA}/web`, { spec: { maxReplicas: 1 } }, { 'content-type': 'application/merge-patch+json' })
  t.equal(r.status, 422, r.text)
  t.equal(r.json?.message, `${K} "web" is invalid: spec.maxReplicas: Invalid value: 1: must be greater than or equal to \`minReplicas\``)
  t.equal((await s.request('GET', `${HPA}/web`)).json.spec.maxReplicas, 10)
})
