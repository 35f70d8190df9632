// Package apiservertest is the part of the apiserver's test surface that is
// about the API, not about the store behind it: HTTP requests and their
// answers (status codes, resourceVersions, continue tokens, watch streams,
// 410s after compaction), run against an apiserver on whatever store the
// caller provides. The apiserver package runs it on the in-memory store;
// the nested module listwatch/etcd runs it on etcd. One suite, two stores.
//
// It sits on top of the server half (store → apiserver/cacher →
// apiserver → HTTP) and speaks only HTTP to it, as a client would, so it
// imports nothing of the client half. It mirrors what
// k8s.io/apiserver/pkg/storage/testing does for Kubernetes' storage layers,
// one level up: the same expectations for every backend.
//
// The apiserver's own tests that depend on the in-memory store (its history
// limits, its memory use, its exact revision numbers) stay in the apiserver
// package.
package apiservertest
