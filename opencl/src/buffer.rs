//! Device buffers for the stages: allocation, blocking reads and writes, and a buffer that
//! grows on demand.

use crate::{cl_err, Device};
use anyhow::Result;
use opencl3::memory::{Buffer, CL_MEM_READ_WRITE};
use opencl3::types::CL_BLOCKING;
use std::ptr;

/// A device buffer that grows on demand (never zero-sized: OpenCL forbids that).
pub(crate) struct Buf<T> {
    pub(crate) buf: Buffer<T>,
    len: usize,
}

impl<T> Buf<T> {
    pub(crate) fn new(dev: &Device, len: usize) -> Result<Self> {
        Ok(Buf {
            buf: alloc::<T>(dev, len)?,
            len: len.max(1),
        })
    }
    pub(crate) fn ensure(&mut self, dev: &Device, len: usize) -> Result<()> {
        if len > self.len {
            *self = Buf::new(dev, len.next_power_of_two())?;
        }
        Ok(())
    }
}

pub(crate) fn alloc<T>(dev: &Device, len: usize) -> Result<Buffer<T>> {
    unsafe { Buffer::<T>::create(&dev.context, CL_MEM_READ_WRITE, len.max(1), ptr::null_mut()) }
        .map_err(cl_err("buffer allocation"))
}

pub(crate) fn write<T>(dev: &Device, b: &mut Buffer<T>, data: &[T]) -> Result<()> {
    if data.is_empty() {
        return Ok(());
    }
    unsafe { dev.queue.enqueue_write_buffer(b, CL_BLOCKING, 0, data, &[]) }
        .map_err(cl_err("buffer write"))?;
    Ok(())
}

pub(crate) fn read<T>(dev: &Device, b: &Buffer<T>, out: &mut [T]) -> Result<()> {
    if out.is_empty() {
        return Ok(());
    }
    unsafe { dev.queue.enqueue_read_buffer(b, CL_BLOCKING, 0, out, &[]) }
        .map_err(cl_err("buffer read"))?;
    Ok(())
}
