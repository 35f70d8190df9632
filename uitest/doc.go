// Package uitest drives the browser page (/ui/, package apiserver/ui) in a
// real headless Chromium through the DevTools protocol (chromedp), against
// our apiserver on loopback. It is a nested module so that chromedp stays
// out of the core module's dependencies, as client-go stays in interop/.
package uitest
