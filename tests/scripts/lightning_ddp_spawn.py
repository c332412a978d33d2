"""Lightning's Trainer with strategy="ddp_spawn" on one spawned CPU process and a
DataLoader with workers: the pitfall Lightning warns about ("Dataloader
(num_workers>0) and ddp_spawn do not mix well"). `--persistent` is the fix
that keeps ddp_spawn; `strategy="ddp"` (torchrun-style processes) is the other.
One rank is enough: the pitfall is each rank's own (its workers re-created every epoch),
and every spawned process here (rank, workers) imports Lightning, seconds apiece."""

import argparse
import warnings

import pytorch_lightning as pl
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class Regression(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.mse_loss(self.layer(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--persistent", action="store_true")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")  # Lightning's own advice is not what this test reads
    torch.manual_seed(0)
    data = TensorDataset(torch.randn(32, 4), torch.randn(32, 1))
    loader = DataLoader(data, batch_size=8, num_workers=1, persistent_workers=args.persistent)
    trainer = pl.Trainer(
        accelerator="cpu",
        devices=1,  # still spawned: ddp_spawn starts its ranks with mp.spawn whatever their number
        strategy="ddp_spawn",
        max_epochs=2,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    )
    trainer.fit(Regression(), loader)
    print("fit done", flush=True)


if __name__ == "__main__":
    main()
