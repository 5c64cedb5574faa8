// Package docs provides embedded documentation assets.
package docs
